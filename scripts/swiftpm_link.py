"""SwiftPM's link command for a product, read from its build manifest (SCRATCH/release.yaml).

Shared by scripts/build-glibc.sh (which relinks the objects against glibc) and
scripts/licensing/link-args.py (which makes the relink kit's link line): both start from the
static link `make static` ran, so both refuse a manifest whose link is another one.
"""
import json
import sys


def static_link_args(manifest, product, who):
    """The argument list of the `Linking .../release/PRODUCT` command; exits naming `who` when
    there is none or it is not the -static-executable link."""
    lines = open(manifest).read().split("\n")
    args = None
    for i, line in enumerate(lines):
        text = line.strip()
        if text.startswith('description: "Linking ') and text.endswith("/release/" + product + '"'):
            # The command's fields follow its description within a few lines.
            for following in lines[i + 1:i + 6]:
                if following.strip().startswith("args: "):
                    args = json.loads(following.strip()[len("args: "):])
                    break
            break
    if args is None:
        sys.exit(f"{who}: no link command for {product} in {manifest}")
    if "-static-executable" not in args:
        sys.exit(f"{who}: the {product} link in {manifest} is not the static one (make static)")
    return args
