#!/usr/bin/env bash
# Makes the prepared bundle for a GPU machine that has the CUDA toolkit, CMake, Ninja, a C++ compiler
# and Python's torch, but no package registry (scripts/gpu_check.sh builds against it there).
#
# Why a bundle and not the Debian packages: such a machine cannot install anything. Why this shape:
# the bundle is the Debian packages our build uses here (`apt-get download`, the versions installed
# here), unpacked with `dpkg-deb -x` into one prefix, closed over what the shared libraries need
# (DT_NEEDED), with a manifest. LibTorch is not in it: the machine's Python torch provides it.
#
# Why TurboJPEG by default: OpenCV's imgcodecs pulls GDAL, GDCM, OpenEXR, HDF5, Poppler, ... (with
# it the bundle is 132 packages, 208 MiB unpacked), too much for a bundle of tens of MiB. The default bundle
# carries OpenCV core+imgproc only, plus libjpeg-turbo's TurboJPEG and libpng for decoding, and
# gpu_check.sh configures with -DTRAINER_IMAGE_CODECS=turbojpeg. `--codecs opencv` makes the full one.
#
# Usage: scripts/make_gpu_bundle.sh [--codecs turbojpeg|opencv] [--with-data DIR] [--out DIR]
#   --with-data DIR  also copy DIR/{coco8,coco8-pose,coco128} into the bundle (for a machine without
#                    the shared data; the bundle is a build artefact, never committed)
#   --out DIR        default: build-gpu-bundle/ in the checkout (ignored by git)
# Result: DIR/trainer-gpu-bundle/ (prefix/, data/, MANIFEST.txt, bundle.env) and
#         DIR/trainer-gpu-bundle.tar.gz (what travels to the GPU machine).
set -euo pipefail
source "$(dirname "$0")/env.sh"

codecs=turbojpeg
data_dir=
out=$TRAINER_ROOT/build-gpu-bundle
while [ $# -gt 0 ]; do
  case $1 in
    --codecs) codecs=$2; shift 2 ;;
    --with-data) data_dir=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
    *) echo "make_gpu_bundle: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

log() { printf '[bundle] %s\n' "$*" >&2; }
die() { printf '[bundle] ERROR: %s\n' "$*" >&2; exit 1; }

for tool in apt-get apt-cache dpkg-deb dpkg-query dpkg readelf ldconfig tar gzip sha256sum realpath; do
  command -v "$tool" >/dev/null || die "'$tool' not found: this script runs on Debian 12 (the dev machine)"
done

# The -dev packages the build needs (their runtime libraries follow from the closure below).
DEV_PACKAGES=(libopencv-core-dev libopencv-imgproc-dev libyaml-cpp-dev libspdlog-dev libfmt-dev
              libcli11-dev doctest-dev nlohmann-json3-dev libturbojpeg0-dev libpng-dev zlib1g-dev)
case $codecs in
  turbojpeg) ;;
  opencv) DEV_PACKAGES+=(libopencv-imgcodecs-dev) ;;
  *) die "--codecs must be turbojpeg or opencv, not '$codecs'" ;;
esac
# libopencv-dev holds OpenCV's CMake config; we take its files, not its dependencies (every module).
# libgloo-dev: only its headers are used (c10d's ProcessGroupGloo header; the code is in libtorch).
CONFIG_ONLY_PACKAGES=(libopencv-dev libgloo-dev)
# Libraries every machine with a C++ compiler has; never bundled (a bundled libc would not load).
BASE_SONAMES=" libc.so.6 libm.so.6 libmvec.so.1 libpthread.so.0 libdl.so.2 librt.so.1 libresolv.so.2
  libutil.so.1 ld-linux-x86-64.so.2 libstdc++.so.6 libgcc_s.so.1 "

ldconfig_cache=$(ldconfig -p)
triplet=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
bundle=$out/trainer-gpu-bundle
prefix=$bundle/prefix
debs=$out/debs
libdir=$prefix/usr/lib/$triplet
rm -rf "$bundle" "$out/trainer-gpu-bundle.tar.gz"
mkdir -p "$prefix" "$debs"

declare -A fetched=()   # package -> version
declare -A deb_file=()  # package -> .deb path
declare -A unpacked=()  # package -> 1 once in the prefix

# Downloads one package (the version installed here, so the bundle matches this machine's build;
# the candidate version when it is not installed or no longer downloadable) and unpacks it.
fetch() {
  local pkg=$1 ver enc f
  [ -n "${fetched[$pkg]:-}" ] && return 0
  ver=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null || true)
  [ -n "$ver" ] || ver=$(apt-cache policy "$pkg" | awk '/Candidate:/{print $2}')
  [ -n "$ver" ] && [ "$ver" != "(none)" ] || die "no version of '$pkg' known to apt (run apt-get update?)"
  enc=${ver//:/%3a}
  f=$(compgen -G "$debs/${pkg}_${enc}_*.deb" | head -n1 || true)
  if [ -z "$f" ]; then
    if ! (cd "$debs" && apt-get download -q "$pkg=$ver" >/dev/null 2>&1); then
      ver=$(apt-cache policy "$pkg" | awk '/Candidate:/{print $2}')
      log "warning: $pkg: installed version not downloadable, taking candidate $ver"
      enc=${ver//:/%3a}
      (cd "$debs" && apt-get download -q "$pkg=$ver" >/dev/null 2>&1) || die "apt-get download $pkg=$ver failed"
    fi
    f=$(compgen -G "$debs/${pkg}_${enc}_*.deb" | head -n1 || true)
    [ -n "$f" ] || die "downloaded $pkg=$ver but found no .deb in $debs"
  fi
  fetched[$pkg]=$ver
  deb_file[$pkg]=$f
}

# Puts a fetched package into the prefix.
unpack() {
  [ -n "${unpacked[$1]:-}" ] && return 0
  fetch "$1"
  dpkg-deb -x "${deb_file[$1]}" "$prefix"
  unpacked[$1]=1
  log "  $1 ${fetched[$1]}"
}

# Debian 12 packages still put some libraries in /lib; merge them into /usr/lib as the distribution
# does on disk, and make absolute symlinks relative so the prefix can move.
normalise_prefix() {
  local d link target
  for d in lib lib64 bin sbin; do
    if [ -d "$prefix/$d" ] && [ ! -L "$prefix/$d" ]; then
      mkdir -p "$prefix/usr/$d"
      cp -a "$prefix/$d/." "$prefix/usr/$d/"
      rm -rf "${prefix:?}/$d"
    fi
  done
  while IFS= read -r -d '' link; do
    target=$(readlink "$link")
    case $target in
      /lib/*|/lib64/*|/bin/*|/sbin/*) target=/usr$target ;;
      /*) ;;
      *) continue ;;
    esac
    ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$prefix$target")" "$link"
  done < <(find "$prefix" -type l -print0)
}

# Paths a fetched package put into the prefix (normalised like the prefix: lib/ -> usr/lib/).
pkg_files() {
  local pkg=$1 list=$debs/lists/$1.txt
  if [ ! -f "$list" ]; then
    mkdir -p "$debs/lists"
    dpkg-deb -c "${deb_file[$pkg]}" | awk '{print $6}' | sed 's|^\./||; s|^\(lib\|lib64\|bin\|sbin\)/|usr/&|' > "$list"
  fi
  cat "$list"
}

# The fetched package that put PATH (relative to the prefix) there.
bundled_owner() {
  local p
  for p in "${!unpacked[@]}"; do
    pkg_files "$p" | grep -qxF "$1" && { echo "$p"; return 0; }
  done
  return 1
}

# Candidates for one of PKG's dependencies: every name in each Depends/Pre-Depends group, in order,
# providers of virtual packages included; the base packages we never bundle are left out.
dependency_candidates() {
  apt-cache depends "$1" 2>/dev/null | awk '
    /^ *\|?(Pre)?Depends:/ { dep=1; if ($NF !~ /^</) print $NF; next }
    /^ *\|?[A-Za-z-]+:/ { dep=0; next }
    /^    [^ ]/ && dep { print $1 }' | grep -vxE 'libc6|libgcc-s1|libstdc\+\+6|gcc-[0-9]+-base' | awk '!seen[$0]++'
}

# Prints the package that provides FILE (a basename when MODE=soname, else a path relative to the
# prefix) for the bundled file NEEDER: the package that owns it here when it is installed here (fast),
# else the first dependency of NEEDER's package whose .deb holds it (works without installing).
provider_of() {
  local mode=$1 file=$2 needer=$3 host real owner p
  if [ "$mode" = soname ]; then
    host=$(awk -v so="$file" '$1 == so && /x86-64/ {print $NF; exit}' <<< "$ldconfig_cache")
  else
    host=/$file
  fi
  if [ -n "$host" ] && [ -e "$host" ]; then
    real=$(realpath "$host")
    owner=$(dpkg -S "$real" 2>/dev/null | head -n1 | cut -d: -f1 || true)
    [ -n "$owner" ] || owner=$(dpkg -S "${real/#\/usr\/lib\//\/lib\/}" 2>/dev/null | head -n1 | cut -d: -f1 || true)
    [ -n "$owner" ] && { echo "$owner"; return 0; }
  fi
  owner=$(bundled_owner "$needer") || die "cannot tell which bundled package holds $needer"
  for p in $(dependency_candidates "$owner"); do
    fetch "$p" >/dev/null
    if [ "$mode" = soname ]; then
      pkg_files "$p" | grep -q "/$file\$" && { echo "$p"; return 0; }
    else
      pkg_files "$p" | grep -qxF "$file" && { echo "$p"; return 0; }
    fi
  done
  die "$needer needs $file, and neither this machine nor the dependencies of $owner provide it"
}

# Prints the packages for every library the prefix needs but does not hold.
missing_packages() {
  local provided f so link target
  local -A needer=()  # missing soname -> one bundled file that needs it
  provided=" $(find "$prefix/usr/lib" \( -type f -o -type l \) -name '*.so*' -printf '%f ' 2>/dev/null) "
  while IFS= read -r -d '' f; do
    for so in $(readelf -d "$f" 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
      case "$provided$BASE_SONAMES" in *" $so "*) continue ;; esac
      needer[$so]=${f#"$prefix"/}
    done
  done < <(find "$prefix/usr/lib" -type f -name '*.so*' -print0)
  for so in "${!needer[@]}"; do
    provider_of soname "$so" "${needer[$so]}"
  done
  # Dangling links in lib/ (a -dev package's libfoo.so pointing at the runtime package's file).
  while IFS= read -r -d '' link; do
    target=$(realpath -m "$link")
    provider_of path "${target#"$prefix"/}" "${link#"$prefix"/}"
  done < <(find "$prefix/usr/lib" -xtype l -print0)
}

log "fetching ${#DEV_PACKAGES[@]} -dev packages and OpenCV's CMake config into $prefix"
for p in "${DEV_PACKAGES[@]}" "${CONFIG_ONLY_PACKAGES[@]}"; do unpack "$p"; done
normalise_prefix
log "closing over the libraries they need"
for round in 1 2 3 4 5 6 7 8 9 10; do
  new=$(missing_packages | sort -u)
  [ -z "$new" ] && break
  for p in $new; do unpack "$p"; done
  normalise_prefix
  [ "$round" = 10 ] && die "library closure did not converge after 10 rounds"
done

# update-alternatives links (libblas.so.3 -> blas/libblas.so.3) are made by postinst scripts, which
# dpkg-deb -x does not run: make them for every library that sits only in a subfolder.
while IFS= read -r -d '' f; do
  soname=$(readelf -d "$f" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
  [ -n "$soname" ] && [ ! -e "$libdir/$soname" ] && ln -s "$(realpath --relative-to="$libdir" "$f")" "$libdir/$soname"
done < <(find "$libdir" -mindepth 2 -type f -name '*.so*' -print0)

# OpenCV's export file refuses to load when any module's library is missing; drop the existence
# check for the modules we do not carry (their targets stay defined and unused).
patched=()
for f in "$libdir"/cmake/opencv4/OpenCVModules-*.cmake; do
  [ -f "$f" ] || continue
  for mod in $(sed -n 's/^list(APPEND _cmake_import_check_targets \(opencv_[a-z0-9_]*\) )$/\1/p' "$f"); do
    lib=$(sed -n "s|^list(APPEND _cmake_import_check_files_for_$mod \"\${_IMPORT_PREFIX}/\(.*\)\" )\$|\1|p" "$f")
    if [ -n "$lib" ] && [ ! -e "$prefix/usr/$lib" ]; then
      sed -i "/^list(APPEND _cmake_import_check_targets $mod )\$/d;/^list(APPEND _cmake_import_check_files_for_$mod /d" "$f"
      patched+=("$mod")
    fi
  done
done
[ ${#patched[@]} -gt 0 ] && log "OpenCV modules not carried (existence check dropped): ${patched[*]}"

# libjpeg-turbo's CMake config names absolute /usr paths and libjpeg (not carried): drop it. The build
# finds TurboJPEG with find_path/find_library (cmake/TrainerDependencies.cmake).
removed=()
if [ -d "$libdir/cmake/libjpeg-turbo" ]; then
  rm -rf "$libdir/cmake/libjpeg-turbo"
  removed+=("cmake/libjpeg-turbo")
fi

# Trim what a build never reads.
rm -rf "$prefix"/usr/share/{doc,man,info,lintian,bug,bash-completion}
find "$libdir" -maxdepth 1 -name '*.a' | while read -r a; do
  [ -e "${a%.a}.so" ] && rm -f "$a"
done

# Verify: every NEEDED library is in the bundle or in the base set; no absolute links remain.
left=$(missing_packages || true)
[ -z "$left" ] || die "closure incomplete: $left"
abs=$(find "$prefix" -type l -lname '/*' | head -n3)
[ -z "$abs" ] || die "absolute links remain: $abs"
glibc_min=$(find "$prefix/usr/lib" -type f -name '*.so*' -exec readelf -V {} + 2>/dev/null |
            grep -o 'Name: GLIBC_[0-9.]*' | sed 's/Name: GLIBC_//' | sort -uV | tail -n1)
glibcxx_min=$(find "$prefix/usr/lib" -type f -name '*.so*' -exec readelf -V {} + 2>/dev/null |
              grep -o 'Name: GLIBCXX_[0-9.]*' | sed 's/Name: GLIBCXX_//' | sort -uV | tail -n1)

if [ -n "$data_dir" ]; then
  mkdir -p "$bundle/data"
  for d in coco8 coco8-pose coco128; do
    [ -d "$data_dir/$d" ] && cp -a "$data_dir/$d" "$bundle/data/"
  done
  log "data: $(ls "$bundle/data" | tr '\n' ' ')"
fi

cat > "$bundle/bundle.env" <<EOF
# Read by scripts/gpu_check.sh.
TRAINER_BUNDLE_CODECS=$codecs
TRAINER_BUNDLE_TRIPLET=$triplet
TRAINER_BUNDLE_GLIBC_MIN=$glibc_min
TRAINER_BUNDLE_GLIBCXX_MIN=$glibcxx_min
EOF

{
  echo "trainer GPU bundle: Debian packages unpacked into prefix/ (scripts/make_gpu_bundle.sh)"
  echo "made: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release; echo "$PRETTY_NAME") from $(git -C "$TRAINER_ROOT" rev-parse --short HEAD 2>/dev/null || echo '?')"
  echo "codecs: $codecs (configure with -DTRAINER_IMAGE_CODECS=$codecs)"
  echo "needs on the target: glibc >= $glibc_min, libstdc++ with GLIBCXX_$glibcxx_min, and:$BASE_SONAMES"
  [ ${#patched[@]} -gt 0 ] && echo "patched: OpenCVModules-*.cmake existence check dropped for ${patched[*]}"
  [ ${#removed[@]} -gt 0 ] && echo "removed: ${removed[*]} (absolute /usr paths)"
  [ -d "$bundle/data" ] && echo "data: $(ls "$bundle/data" | tr '\n' ' ')(copied from $data_dir)"
  echo
  echo "package version deb_bytes sha256"
  for p in $(printf '%s\n' "${!unpacked[@]}" | sort); do
    f=${deb_file[$p]}
    echo "$p ${fetched[$p]} $(stat -c %s "$f") $(sha256sum "$f" | cut -d' ' -f1)"
  done
} > "$bundle/MANIFEST.txt"

tar -C "$out" -czf "$out/trainer-gpu-bundle.tar.gz" trainer-gpu-bundle
log "packages: ${#unpacked[@]}, .deb total $(for p in "${!unpacked[@]}"; do cat "${deb_file[$p]}"; done | wc -c | numfmt --to=iec)"
log "unpacked: $(du -sb "$prefix" | cut -f1 | numfmt --to=iec) prefix$( [ -d "$bundle/data" ] && echo ", $(du -sb "$bundle/data" | cut -f1 | numfmt --to=iec) data")"
log "tarball:  $out/trainer-gpu-bundle.tar.gz $(stat -c %s "$out/trainer-gpu-bundle.tar.gz" | numfmt --to=iec)"
log "manifest: $bundle/MANIFEST.txt"
