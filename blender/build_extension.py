# SPDX-License-Identifier: MIT OR Apache-2.0
"""Build the rigml Blender extension zip: the add-on in blender/rigml_extension plus the rigml
wheel for one platform, validated and packed by Blender's own extension tool.

Usage (with the interpreter that has the `bpy` package, for Blender's `blender_ext.py`):
  .venv-bpy/bin/python blender/build_extension.py --wheel target/wheels/rigml-*.whl --out target/blender
Prints the path of the zip. Blender 4.2+ installs it with Edit > Preferences > Get Extensions >
Install from Disk (or `blender --command extension install-file -r user_default FILE`).
"""

import argparse
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "rigml_extension")

# Wheel platform tags -> Blender's extension platform names.
PLATFORMS = [
    (r"manylinux.*_x86_64|linux_x86_64", "linux-x64"),
    (r"manylinux.*_aarch64|linux_aarch64", "linux-arm64"),
    (r"macosx_.*_arm64", "macos-arm64"),
    (r"macosx_.*_x86_64", "macos-x64"),
    (r"win_amd64", "windows-x64"),
    (r"win_arm64", "windows-arm64"),
]


def blender_ext_tool() -> str:
    """Blender's `blender_ext.py` inside the installed `bpy` package (found without importing it)."""
    spec = importlib.util.find_spec("bpy")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("error: the bpy package is not installed in this interpreter (see tools/blender/README.md)")
    root = list(spec.submodule_search_locations)[0]
    for version in sorted(os.listdir(root), reverse=True):
        tool = os.path.join(root, version, "scripts", "addons_core", "bl_pkg", "cli", "blender_ext.py")
        if os.path.isfile(tool):
            return tool
    sys.exit(f"error: {root}: no scripts/addons_core/bl_pkg/cli/blender_ext.py")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--wheel", required=True, help="the rigml wheel to bundle")
    parser.add_argument("--out", required=True, help="folder for the zip")
    args = parser.parse_args()
    wheel = os.path.abspath(args.wheel)
    name = os.path.basename(wheel)
    match = re.match(r"rigml-([^-]+)-.*-([^-]+)\.whl$", name)
    if not os.path.isfile(wheel) or not match:
        sys.exit(f"error: {args.wheel}: not a rigml wheel file")
    version, tag = match.groups()
    platform = next((p for pattern, p in PLATFORMS if re.search(pattern, tag)), None)
    if platform is None:
        sys.exit(f"error: {name}: unknown platform tag {tag!r}")
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        src = os.path.join(work, "rigml")
        os.makedirs(os.path.join(src, "wheels"))
        for file in os.listdir(SOURCE):
            if file.endswith(".py"):
                shutil.copy2(os.path.join(SOURCE, file), src)
        shutil.copy2(wheel, os.path.join(src, "wheels", name))
        with open(os.path.join(SOURCE, "blender_manifest.toml.in")) as f:
            manifest = f.read()
        manifest = manifest.replace("@VERSION@", version).replace("@PLATFORM@", platform).replace("@WHEEL@", name)
        with open(os.path.join(src, "blender_manifest.toml"), "w") as f:
            f.write(manifest)
        out = os.path.abspath(args.out)
        zip_name = f"rigml-{version}-{platform.replace('-', '_')}.zip"
        subprocess.run(
            [sys.executable, blender_ext_tool(), "build", "--source-dir", src, "--output-filepath", os.path.join(out, zip_name)],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    print(os.path.join(out, zip_name))


if __name__ == "__main__":
    main()
