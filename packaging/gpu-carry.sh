#!/usr/bin/env bash
# Run HERE (Debian 12, with the mirror): downloads the Debian packages the GPU machine lacks to build
# core + CLI and the gpu tests against its own PyTorch (it has no Qt, no OpenCV, nlohmann or CLI11
# headers and no registry) into .gpu-carry/ (git-ignored), for packaging/gpu-check.sh to unpack there with
# dpkg -x, and a slice of Fashion-MNIST (the GPU machine has no dataset): the first 20,000 training
# images and the 10,000 test images, as IDX files. About 40 MiB: carry it with the device tool's
# `carry: [".gpu-carry"]` (64 MiB in all with the work tree).
# OpenCV's image codecs pull in GDAL, GDCM, OpenEXR... (180 MiB): not carried; gpu-check.sh gives
# the libraries nothing calls on that path an empty stand-in (PNG, JPEG, WebP, TIFF are carried).
set -euo pipefail
cd "$(dirname "$0")/.."
PKGS=(
  nlohmann-json3-dev libcli11-dev
  libopencv-core406 libopencv-imgproc406 libopencv-imgcodecs406
  libopencv-core-dev libopencv-imgproc-dev libopencv-imgcodecs-dev
  libpng16-16 libjpeg62-turbo libwebp7 libtiff6 libdeflate0 liblerc4 libjbig0 libopenjp2-7
  libtbb12 libtbbmalloc2 libblas3 liblapack3 libgfortran5
  libqt6core6 libqt6test6 qt6-base-dev qt6-base-dev-tools qmake6
  libicu72 libdouble-conversion3 libb2-1 libpcre2-16-0 libglib2.0-0 libzstd1
)
mkdir -p .gpu-carry
cd .gpu-carry
missing=()
for p in "${PKGS[@]}"; do ls "${p}"_*.deb >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "gpu-carry: downloading ${missing[*]}" >&2
  apt-get download "${missing[@]}" >/dev/null
fi

# The dataset slice, from Debian's dataset-fashion-mnist installed here (packaging/setup.sh).
if [ ! -f fashion-mnist/.ok ]; then
  mkdir -p fashion-mnist
  python3 - /usr/share/datasets/fashion-mnist fashion-mnist 20000 <<'PY'
import gzip, os, struct, sys
src, dst, keep = sys.argv[1], sys.argv[2], int(sys.argv[3])
for stem, limit in (("train", keep), ("t10k", None)):
    for kind, per in (("images-idx3-ubyte", 28 * 28), ("labels-idx1-ubyte", 1)):
        name = f"{stem}-{kind}.gz"
        data = gzip.open(os.path.join(src, name)).read()
        dims = data[3]
        header = 4 + 4 * dims
        n = struct.unpack(">I", data[4:8])[0]
        n = min(n, limit) if limit else n
        out = data[:4] + struct.pack(">I", n) + data[8:header] + data[header:header + n * per]
        with gzip.open(os.path.join(dst, name), "wb", compresslevel=9) as f:
            f.write(out)
PY
  touch fashion-mnist/.ok
fi
echo "gpu-carry: $(ls *.deb | wc -l) packages, $(du -sh . | cut -f1) in .gpu-carry/" >&2

# Stand-ins for what OpenCV's libraries link but the workbench never reaches (GDAL, GDCM, OpenEXR,
# GLX): Debian links them BIND_NOW, so each stand-in defines the symbols OpenCV takes from them
# (as functions that are never called, or zeroed objects of their size). Built from the real
# libraries installed here (libopencv-dev's dependencies).
mkdir -p stubs
tmp=$(mktemp -d)
dpkg -x libopencv-core406_*.deb "$tmp"; dpkg -x libopencv-imgproc406_*.deb "$tmp"; dpkg -x libopencv-imgcodecs406_*.deb "$tmp"
L=/usr/lib/x86_64-linux-gnu
python3 - "$tmp$L" "$L" stubs <<'PY'
import subprocess, sys, os
carried, system, out = sys.argv[1:4]
consumers = [os.path.join(carried, f"libopencv_{m}.so.406") for m in ("core", "imgproc", "imgcodecs")]
stand_in = ["libGLX.so.0", "libgdcmMSFF.so.3.0", "libgdcmDSED.so.3.0", "libOpenEXR-3_1.so.30", "libgdal.so.32"]
provided = ["libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "libz.so.1", "libjpeg.so.62", "libwebp.so.7",
            "libpng16.so.16", "libtiff.so.6", "libopenjp2.so.7", "liblapack.so.3", "libblas.so.3", "libtbb.so.12"]
def nm(args, path):
    return subprocess.run(["nm", "-D", *args, path], capture_output=True, text=True).stdout.splitlines()
undef = {l.split()[-1].split("@")[0] for c in consumers for l in nm(["--undefined-only"], c) if l.split()[-2] == "U"}
defined = {l.split()[-1].split("@")[0] for lib in consumers + [os.path.join(system, p) for p in provided]
           for l in nm(["--defined-only"], lib)}
need = undef - defined
# the symbols' kind and size, from the real libraries and what they pull in
closure = subprocess.run(["ldd"] + [os.path.join(system, s) for s in stand_in], capture_output=True, text=True).stdout
libs = {os.path.join(system, s) for s in stand_in} | {w for w in closure.split() if w.startswith("/")}
kind = {}
for lib in libs:
    for l in nm(["--defined-only", "-S"], lib):
        f = l.split()
        name = f[-1].split("@")[0]
        if name in need and name not in kind:
            kind[name] = (f[-2], int(f[1], 16) if len(f) == 4 else 8)
missing = need - kind.keys()
if missing:
    sys.exit(f"gpu-carry: no library here defines {sorted(missing)[:5]}...")
asm = []
for name, (t, size) in sorted(kind.items()):
    if t in "TtWiI":
        asm.append(f".text\n.globl {name}\n.type {name},@function\n{name}:\n ret\n")
    else:
        asm.append(f".data\n.globl {name}\n.type {name},@object\n.size {name},{max(size,1)}\n{name}:\n .zero {max(size,1)}\n")
src = os.path.join(out, "opencv_stand_in.s")
open(src, "w").write("".join(asm))
for soname in stand_in:
    body = src if soname == "libgdal.so.32" else "/dev/null"
    subprocess.run(["gcc", "-shared", "-nostdlib", "-x", "assembler", body, "-o", os.path.join(out, soname),
                    f"-Wl,-soname,{soname}"], check=True)
print(f"gpu-carry: stand-ins for {', '.join(stand_in)} ({len(kind)} symbols)", file=sys.stderr)
PY
rm -rf "$tmp"
