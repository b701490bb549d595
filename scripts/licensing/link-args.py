#!/usr/bin/env python3
"""A product's link command from SwiftPM's build manifest, made relocatable for the relink kit.

Usage: link-args.py [--chroot DIR] RELEASE_YAML PRODUCT REPO_ROOT KIT_DIR > KIT_DIR/link-args/PRODUCT

Copies the objects the link reads into KIT_DIR/objects/<Module>.build/ and writes their list
to KIT_DIR/objects/PRODUCT.objects; prints the link arguments one a line, with @KIT@ for the
kit's folder and @OUT@ for where link.sh writes the result. The compiler driver becomes
@SWIFTC@. Any other path of the build machine left in the command is an error: the kit would
not link anywhere else.

--chroot DIR: the manifest is of a cross link run inside the chroot DIR (the aarch64 build,
scripts/aarch64), so its paths are DIR + path here. The SDK's sysroot (-sdk, -resource-dir)
becomes @SDK@, and the static libraries the link takes from the build's own folders
(OpenSSL, SQLite, libgpiod, libmosquitto: not in any SDK) are copied into KIT_DIR/lib.
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from swiftpm_link import static_link_args  # noqa: E402

chroot = ""
argv = sys.argv[1:]
if argv[:1] == ["--chroot"]:
    chroot, argv = argv[1].rstrip("/"), argv[2:]
manifest, product, repo, kit = argv
args = static_link_args(manifest, product, "link-args")
# The scratch path as the link command names it (inside the chroot for a cross link).
scratch = os.path.dirname(manifest)[len(chroot):]


def here(path):
    return chroot + path


def copy_objects(file_list):
    kept = []
    for line in open(here(file_list)).read().split("\n"):
        path = line.strip().strip("'\"")
        if not path:
            continue
        relative = os.path.join(os.path.basename(os.path.dirname(path)), os.path.basename(path))
        target = os.path.join(kit, "objects", relative)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(here(path), target)
        kept.append("@KIT@/objects/" + relative)
    with open(os.path.join(kit, "objects", product + ".objects"), "w") as handle:
        handle.write("\n".join(kept) + "\n")


def copy_libraries(folder):
    """A cross link's -L folder of the build: the static libraries it holds that the link names."""
    names = [a[2:] for a in args if a.startswith("-l")]
    os.makedirs(os.path.join(kit, "lib"), exist_ok=True)
    for name in names:
        source = here(os.path.join(folder, f"lib{name}.a"))
        if os.path.isfile(source):
            shutil.copyfile(source, os.path.join(kit, "lib", f"lib{name}.a"))


sdk = None
if chroot:
    if "-sdk" not in args:
        sys.exit(f"link-args: the cross link of {product} in {manifest} names no -sdk")
    sdk = args[args.index("-sdk") + 1]

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
    elif chroot and arg.startswith("-L/ock/"):
        copy_libraries(arg[2:])
        if "-L@KIT@/lib" not in out:
            out.append("-L@KIT@/lib")
    elif arg == "-Xlinker" and following.startswith("-Map="):
        out += ["-Xlinker", "-Map=@OUT@/" + product + ".map"]
        skip_next = True
    elif sdk and sdk in arg:
        out.append(arg.replace(sdk, "@SDK@"))
    else:
        out.append(arg)
leftover = [a for a in out if repo in a or scratch in a or (chroot and "/ock/" in a)]
if leftover:
    sys.exit(f"link-args: paths of this machine left in the {product} link: {leftover}")
print("\n".join(out))
