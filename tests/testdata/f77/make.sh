#!/bin/sh
# Regenerates the f77 golden files with gfortran (run from this directory: sh make.sh).
# wr.f is Packman's 1990 `wr` program (shared/seeds/001_*.txt) with file='fort.1' added, laid
# out in fixed form. The goldens use a(130) instead of a(130000) (the only change, made by sed
# below) so that each file is about 10 KiB; tests/f77_test.ts builds the full-size one at test time.
# a(1:129) is never set by the program: at full size gfortran puts `a` in static storage (zeros),
# but a(130) would live on the stack (garbage), so the small build adds -fno-automatic (static
# locals, as F77 compilers of 1990 did) to get the same zeros.
set -eu
here=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed 's/130000/130/g' wr.f > "$tmp/wr130.f"
build() { # name flags...
  name=$1; shift
  (cd "$tmp" && rm -f fort.1 && gfortran -O2 -fno-automatic "$@" -o wr wr130.f && ./wr && mv fort.1 "$here/$name")
}
build wr130-le4.bin
build wr130-be4.bin -fconvert=big-endian
build wr130-le8.bin -frecord-marker=8
build wr130-sub256.bin -fmax-subrecord-length=256
build wr130-be8-sub256.bin -fconvert=big-endian -frecord-marker=8 -fmax-subrecord-length=256
gfortran --version | head -1 > VERSION
ls -l *.bin
