#!/usr/bin/env bash
# Lint the Yocto layer without a Yocto build host:
#   1. oelint-adv on every .bb, .bbappend, .inc and conf/layer.conf of the layer, checked
#      against the Yocto release the layer declares (LAYERSERIES_COMPAT);
#   2. layer.conf's fields (one collection, its pattern, priority, dependencies, series);
#   3. each kas file against the JSON schema that the kas package ships, with its includes.
# oelint-adv and kas come from PyPI into a private venv (pinned, like virtme-ng in deps.sh).
#
# Usage: scripts/yocto-lint.sh [LAYER_DIR [KAS_DIR]]
#   defaults: yocto/meta-opencarkey and yocto/kas (KAS_DIR "-" skips the kas check)
# Prints one line per finding and a summary line "yocto-lint: N findings"; exits 1 when N > 0,
# 2 when it cannot run.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
layer=${1:-$root/yocto/meta-opencarkey}
kas_dir=${2:-$root/yocto/kas}

VENV=${OPENCARKEY_OELINT_VENV:-/var/cache/opencarkey-oelint}
OELINT_VERSION=9.11.2
# oelint-adv's own data and parser pinned too: a new oelint-data can add findings overnight.
PINS=("oelint-adv==$OELINT_VERSION" "oelint-parser==8.13.2" "oelint-data==1.5.26" "kas==5.5")
marker=$VENV/.version-$OELINT_VERSION-kas-5.5

if [[ ! -x $VENV/bin/oelint-adv || ! -f $marker ]]; then
    if [[ $(id -u) -eq 0 ]]; then as_root=(); elif command -v sudo >/dev/null; then as_root=(sudo)
    else echo "yocto-lint: need root or sudo to create $VENV" >&2; exit 2; fi
    echo "yocto-lint: installing ${PINS[*]} into $VENV" >&2
    "${as_root[@]}" rm -rf "$VENV"
    "${as_root[@]}" /usr/bin/python3 -m venv "$VENV"
    "${as_root[@]}" "$VENV/bin/pip" install -q --disable-pip-version-check "${PINS[@]}" >/dev/null
    "${as_root[@]}" touch "$marker"
fi

[[ -f $layer/conf/layer.conf ]] || { echo "yocto-lint: $layer/conf/layer.conf not found" >&2; exit 2; }

# The series the layer claims decides which release's rules oelint-adv applies.
release=$(sed -n 's/^LAYERSERIES_COMPAT_[A-Za-z0-9_-]* *= *"\([a-z]*\).*/\1/p' "$layer/conf/layer.conf" | head -1)
[[ -n $release ]] || { echo "yocto-lint: no LAYERSERIES_COMPAT in layer.conf" >&2; exit 2; }

mapfile -t files < <(find "$layer" -type f \( -name '*.bb' -o -name '*.bbappend' -o -name '*.inc' \) | sort)
files+=("$layer/conf/layer.conf")

# Rules switched off for the whole layer, each for a reason that holds for every file:
#   oelint.vars.homepageping: opens HOMEPAGE over the network (none here; suppressed rules are
#     not loaded, so nothing is sent);
#   oelint.var.bbclassextend: the recipes install prebuilt target binaries or build images, so
#     native/nativesdk variants have nothing to build.
# Findings that concern one line are suppressed there with "# nooelint:" and a reason above it.
suppress=(--suppress oelint.vars.homepageping --suppress oelint.var.bbclassextend)

findings=0
oelint_out=$(cd "$layer" && "$VENV/bin/oelint-adv" --release "$release" --mode all --quiet \
    --relpaths --jobs 1 "${suppress[@]}" "${files[@]}" 2>&1) || true
if [[ -n $oelint_out ]]; then
    printf '%s\n' "$oelint_out"
    findings=$((findings + $(printf '%s\n' "$oelint_out" | grep -c ':oelint\.' || true)))
    # Anything else on the output (a crash, a parse error) counts as a finding too.
    findings=$((findings + $(printf '%s\n' "$oelint_out" | grep -vc ':oelint\.' || true)))
fi
echo "yocto-lint: oelint-adv $OELINT_VERSION --release $release: ${#files[@]} files"

# layer.conf: the fields bitbake needs, all for the same collection.
layer_out=$("$VENV/bin/python" - "$layer/conf/layer.conf" <<'PY'
import re, sys
text = open(sys.argv[1]).read().replace("\\\n", " ")
values = {}
for m in re.finditer(r'^([A-Za-z0-9_:-]+)\s*(\+=|\?=|=|:=|\.=)\s*"([^"]*)"', text, re.M):
    values.setdefault(m.group(1), []).append(m.group(3).strip())
problems = []
collections = " ".join(values.get("BBFILE_COLLECTIONS", [])).split()
if len(collections) != 1:
    problems.append(f"BBFILE_COLLECTIONS names {len(collections)} collections, expected 1")
else:
    c = collections[0]
    for key in ("BBFILE_PATTERN", "BBFILE_PRIORITY", "LAYERSERIES_COMPAT", "LAYERDEPENDS", "LAYERVERSION"):
        if f"{key}_{c}" not in values:
            problems.append(f"{key}_{c} is missing")
    if values.get(f"BBFILE_PATTERN_{c}", [""])[0] != "^${LAYERDIR}/":
        problems.append(f"BBFILE_PATTERN_{c} is not \"^${{LAYERDIR}}/\"")
    if not values.get(f"BBFILE_PRIORITY_{c}", ["x"])[0].isdigit():
        problems.append(f"BBFILE_PRIORITY_{c} is not a number")
    if "core" not in " ".join(values.get(f"LAYERDEPENDS_{c}", [])).split():
        problems.append(f"LAYERDEPENDS_{c} does not name core")
if "${LAYERDIR}" not in " ".join(values.get("BBPATH", [])):
    problems.append("BBPATH does not add ${LAYERDIR}")
if not any("${LAYERDIR}/recipes-" in v for v in values.get("BBFILES", [])):
    problems.append("BBFILES does not add the layer's recipes")
for p in problems:
    print(f"conf/layer.conf: {p}")
PY
)
if [[ -n $layer_out ]]; then
    printf '%s\n' "$layer_out"
    findings=$((findings + $(printf '%s\n' "$layer_out" | grep -c .)))
fi
echo "yocto-lint: layer.conf fields checked"

# kas files: the schema and file-version range of the installed kas, includes resolved from
# the repository's top folder as kas does. kas itself cannot run here: it would clone layers.
if [[ $kas_dir != - ]]; then
    mapfile -t kas_files < <(find "$kas_dir" -maxdepth 1 -name '*.yml' | sort)
    kas_out=$("$VENV/bin/python" - "$root" "$release" "${kas_files[@]}" <<'PY'
import os, sys, yaml
import jsonschema
from kas import __file_version__, __compatible_file_version__
from kas.configschema import CONFIGSCHEMA

root, release, files = sys.argv[1], sys.argv[2], sys.argv[3:]
validator = jsonschema.validators.validator_for(CONFIGSCHEMA)(CONFIGSCHEMA)
problems, checked = [], 0

def load(path, seen):
    global checked
    rel = os.path.relpath(path, root)
    if path in seen:
        problems.append(f"{rel}: include loop"); return {}
    try:
        with open(path) as f:
            doc = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as e:
        problems.append(f"{rel}: {e}"); return {}
    checked += 1
    for error in sorted(validator.iter_errors(doc), key=str):
        where = "/".join(str(p) for p in error.absolute_path) or "(top)"
        problems.append(f"{rel}: schema: {where}: {error.message}")
    version = doc.get("header", {}).get("version") if isinstance(doc, dict) else None
    if not isinstance(version, int) or not __compatible_file_version__ <= version <= __file_version__:
        problems.append(f"{rel}: header.version {version!r} outside {__compatible_file_version__}..{__file_version__}")
    merged = {}
    for inc in (doc.get("header", {}).get("includes", []) if isinstance(doc, dict) else []):
        if isinstance(inc, str):
            merged.update(load(os.path.join(root, inc), seen | {path}))
    merged.update(doc if isinstance(doc, dict) else {})
    return merged

for path in files:
    config = load(path, frozenset())
    rel = os.path.relpath(path, root)
    repos = config.get("repos") or {}
    # The layer's own repository (no url) must name a layer folder that exists.
    for name, repo in repos.items():
        if repo and not repo.get("url"):
            for layer in (repo.get("layers") or {}):
                if not os.path.isfile(os.path.join(root, layer, "conf", "layer.conf")):
                    problems.append(f"{rel}: repos.{name}: layer {layer} has no conf/layer.conf")
    # Every layer repository but bitbake (numbered branches) on the layer's release branch.
    for name, repo in repos.items():
        if repo and repo.get("url") and name != "bitbake" and repo.get("branch") != release:
            problems.append(f"{rel}: repos.{name}: branch {repo.get('branch')!r}, expected {release!r}")
    if not config.get("machine"):
        problems.append(f"{rel}: no machine")
for p in problems:
    print(p)
PY
    )
    if [[ -n $kas_out ]]; then
        printf '%s\n' "$kas_out"
        findings=$((findings + $(printf '%s\n' "$kas_out" | grep -c .)))
    fi
    echo "yocto-lint: kas $("$VENV/bin/python" -c 'import kas; print(kas.__version__)') schema: ${#kas_files[@]} files"
fi

echo "yocto-lint: $findings findings"
[[ $findings -eq 0 ]]
