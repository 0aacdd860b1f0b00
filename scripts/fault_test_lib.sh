# Sourced by the data-parallel fault scripts (ddp_test.sh, elastic_test.sh) after env.sh: the
# binary and the venv checked, checks that count failures, torchrun from the project's venv, a free
# port. Sets `trainer`, `python`, `failures`; defines log, check, torchrun, free_port.
# Usage: fault_test_setup NAME   (NAME prefixes every log line)
fault_test_setup() {
  fault_test_name=$1
  trainer=${TRAINER_BIN:-$TRAINER_ROOT/build/app/trainer}
  python=$TRAINER_VENV/bin/python
  [ -x "$trainer" ] || { echo "$1: $trainer not built (scripts/build.sh trainer)" >&2; exit 2; }
  [ -x "$python" ] || { echo "$1: no venv at $TRAINER_VENV (scripts/setup.sh)" >&2; exit 2; }
  trainer=$(realpath "$trainer")
  failures=()
}
log() { printf '[%s] %s\n' "$fault_test_name" "$*" >&2; }
check() {  # check NAME CONDITION...
  local name=$1; shift
  if "$@"; then log "ok: $name"; else log "FAILED: $name"; failures+=("$name"); fi
}
torchrun() { "$python" -m torch.distributed.run "$@"; }
free_port() { "$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
