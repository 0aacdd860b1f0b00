#!/usr/bin/env bash
# Builds the Docker image here, with podman, and proves it complete: the Dockerfile's `smoke`
# target runs trainer inside the runtime image as RUN steps (podman cannot run containers on this
# machine; see ../shared/spec/containers.md). Per variant (cpu, cuda):
#   cold  no layer cache, an empty ccache and no build folder: the whole toolchain (Debian
#         packages, the torch wheel) and a full compile of trainer;
#   warm  one source file of lib/ changed: only the build stage re-runs, Ninja's incremental
#         build in the cache mount compiling just that file and linking, nothing downloaded again;
# then the runtime image's size, uncompressed and gzip-compressed (what a registry stores).
# The base is Debian 12 made with debootstrap once (cached in $TRAINER_CACHE/docker, outside the
# clone) and imported as localhost/debian:12; a GPU VM builds the same Dockerfile FROM debian:12.
# Usage: scripts/docker_test.sh [cpu|cuda|both (default)] [--warm-only]
# Prints one JSON line per variant and exits 1 when a build or smoke step fails. Takes long: a cold
# build compiles trainer without ccache (about 20-30 minutes per variant on 2 cores).
set -euo pipefail
source "$(dirname "$0")/env.sh"

variants=${1:-both}
[ "$variants" = both ] && variants="cpu cuda"
warm_only=0
[ "${2:-}" = --warm-only ] && warm_only=1
cache=$TRAINER_CACHE/docker
log() { printf '[docker_test] %s\n' "$*" >&2; }

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }
if ! command -v podman >/dev/null || ! command -v debootstrap >/dev/null; then
  log "installing podman and debootstrap (Debian packages)"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman debootstrap >/dev/null
fi
if ! podman image exists localhost/debian:12; then
  if [ ! -x "$cache/rootfs-bookworm/bin/sh" ]; then
    log "making the Debian 12 base with debootstrap (once, in $cache)"
    mkdir -p "$cache"
    as_root debootstrap --variant=minbase bookworm "$cache/rootfs-bookworm" \
      http://deb.debian.org/debian >&2
  fi
  tar -C "$cache/rootfs-bookworm" -c . | podman import - localhost/debian:12 >/dev/null
fi

# A CUDA image's layers take ~15 GB while they are committed (the toolchain layer alone ~7 GB);
# a full disk fails the commit late with "no space left on device". Check first.
store=$(podman info --format '{{.Store.GraphRoot}}' 2>/dev/null || echo /var/lib/containers)
mkdir -p "$store"
free_gb=$(( $(df -Pk "$store" | awk 'NR == 2 {print $4}') / 1024 / 1024 ))
if [ "$free_gb" -lt 30 ]; then
  log "only ${free_gb} GB free under $store; a build needs about 30 GB."
  log "free space with: podman image prune -f (unused layers), podman rmi IMAGE"
  exit 1
fi

# A copy of the build context (tracked files and .git), so that the warm build can change a file
# without touching the clone.
context=$(mktemp -d -t trainer-docker-XXXXXX)
trap 'rm -rf "$context"' EXIT
git -C "$TRAINER_ROOT" ls-files -z | tar -C "$TRAINER_ROOT" --null -T - -c | tar -C "$context" -x
cp -a "$TRAINER_ROOT/.git" "$context/.git"

build() {  # build VARIANT TARGET TAG [extra podman args...]: prints the seconds it took
  local variant=$1 target=$2 tag=$3 start cuda=OFF
  shift 3
  [ "$variant" = cuda ] && cuda=ON
  start=$(date +%s)
  # The host's CA bundle: pip inside the build must trust what this network's TLS proxy presents.
  local ca=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}
  podman build --isolation chroot --network host --layers --secret "id=ca,src=$ca" \
    --build-arg BASE=localhost/debian:12 --build-arg TRAINER_CUDA=$cuda \
    --build-arg TOOLCHAIN_EPOCH="$(cat "$cache/epoch-$variant" 2>/dev/null || echo 0)" \
    --target "$target" -t "$tag" "$@" "$context" >>"$cache/build-$variant.log" 2>&1 || return 1
  echo $(( $(date +%s) - start ))
}

failed=0
for variant in $variants; do
  : >"$cache/build-$variant.log"
  cold_s=null smoke=false
  if [ $warm_only = 0 ]; then
    log "$variant: cold build (no layer cache, ccache and build folder emptied): log in $cache/build-$variant.log"
    # A new toolchain epoch (a fresh chain of layers, nothing reused) instead of --no-cache, so
    # the warm build and the smoke stage below reuse exactly this chain (Dockerfile).
    date +%s >"$cache/epoch-$variant"
    if cold_s=$(build "$variant" runtime "localhost/trainer:$variant" \
                  --build-arg CACHE_CLEAR="$(cat "$cache/epoch-$variant")"); then
      log "$variant: cold build ${cold_s}s"
    else
      log "$variant: cold build FAILED (tail of the log follows)"; tail -30 "$cache/build-$variant.log" >&2
      failed=1; continue
    fi
  fi
  # Warm: one function added to a lib/ file; the toolchain layers come from the cache.
  printf '\nnamespace trainer::core { int docker_test_touch() { return %s; } }\n' "$(date +%s)" \
    >>"$context/lib/core/atomic_file.cpp"
  if warm_s=$(build "$variant" runtime "localhost/trainer:$variant"); then
    log "$variant: warm build (a lib/ change) ${warm_s}s"
  else
    log "$variant: warm build FAILED"; tail -30 "$cache/build-$variant.log" >&2; failed=1; continue
  fi
  if smoke_s=$(build "$variant" smoke "localhost/trainer-smoke:$variant"); then
    smoke=true
    log "$variant: smoke stage passed in ${smoke_s}s"
  else
    log "$variant: smoke stage FAILED"; tail -40 "$cache/build-$variant.log" >&2; failed=1
  fi
  size=$(podman image inspect --format '{{.Size}}' "localhost/trainer:$variant")
  compressed=$(podman save "localhost/trainer:$variant" | gzip -1 -c | wc -c)
  printf '{"variant": "%s", "cold_build_s": %s, "warm_build_s": %s, "smoke": %s, "runtime_image_bytes": %s, "runtime_image_gzip_bytes": %s, "base": "localhost/debian:12 (debootstrap bookworm)"}\n' \
    "$variant" "$cold_s" "$warm_s" "$smoke" "$size" "$compressed"
done
exit $failed
