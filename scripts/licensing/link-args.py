#!/usr/bin/env python3
"""A product's link command from SwiftPM's build manifest, made relocatable for the relink kit.

Usage: link-args.py RELEASE_YAML PRODUCT REPO_ROOT KIT_DIR > KIT_DIR/link-args/PRODUCT

Copies the objects the link reads into KIT_DIR/objects/<Module>.build/ and writes their list
to KIT_DIR/objects/PRODUCT.objects; prints the link arguments one a line, with @KIT@ for the
kit's folder and @OUT@ for where link.sh writes the result. The compiler driver becomes
@SWIFTC@. Any other path of the build machine left in the command is an error: the kit would
not link anywhere else.
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from swiftpm_link import static_link_args  # noqa: E402

manifest, product, repo, kit = sys.argv[1:]
args = static_link_args(manifest, product, "link-args")
scratch = os.path.dirname(manifest)


def copy_objects(file_list):
    kept = []
    for line in open(file_list).read().split("\n"):
        path = line.strip().strip("'\"")
        if not path:
            continue
        relative = os.path.join(os.path.basename(os.path.dirname(path)), os.path.basename(path))
        target = os.path.join(kit, "objects", relative)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(path, target)
        kept.append("@KIT@/objects/" + relative)
    with open(os.path.join(kit, "objects", product + ".objects"), "w") as handle:
        handle.write("\n".join(kept) + "\n")


out = ["@SWIFTC@"]
skip_next = False
for index, arg in enumerate(args[1:], start=1):
    if skip_next:
        skip_next = False
        continue
    following = args[index + 1] if index + 1 < len(args) else ""
    if arg == "-o":
        out += ["-o", "@OUT@/" + product]
        skip_next = True
    elif arg == "-L" and following.startswith(scratch):
        out += ["-L", "@KIT@/objects"]
        skip_next = True
    elif arg.startswith("@") and arg.endswith(".LinkFileList"):
        copy_objects(arg[1:])
        out.append("@@KIT@/objects/" + product + ".objects")
    elif arg == "-L" + os.path.join(repo, "build/mosquitto/lib"):
        out.append("-L@KIT@/lib")
    elif arg == "-Xlinker" and following.startswith("-Map="):
        out += ["-Xlinker", "-Map=@OUT@/" + product + ".map"]
        skip_next = True
    else:
        out.append(arg)
leftover = [a for a in out if repo in a or scratch in a]
if leftover:
    sys.exit(f"link-args: paths of this machine left in the {product} link: {leftover}")
print("\n".join(out))
