#!/usr/bin/env bash
# One ISA/toolchain check (registered by fp8q_add_isa_check in tests/CMakeLists.txt):
#   run_isa_check.sh --tool <label> --compiler <path|name> --workdir <dir>
#                    [--asm <file> --check <script> [--check-arg <a>]... [--collect <glob>]]
#                    -- <compiler arguments...>
# Compiles in a fresh <workdir> (hipcc -save-temps writes into the current directory), then,
# with --check, runs <script> <asm file> <check args...>. --collect concatenates the files
# matching <glob> (relative to <workdir>) into the --asm file first (nvcc PTX, hipcc per-arch .s).
# Exit 77 (skipped) only when the compiler is missing; every other problem is a failure.
set -uo pipefail

tool="" compiler="" workdir="" asm="" check="" collect=""
check_args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --tool) tool=$2; shift 2 ;;
    --compiler) compiler=$2; shift 2 ;;
    --workdir) workdir=$2; shift 2 ;;
    --asm) asm=$2; shift 2 ;;
    --check) check=$2; shift 2 ;;
    --check-arg) check_args+=("$2"); shift 2 ;;
    --collect) collect=$2; shift 2 ;;
    --) shift; break ;;
    *) echo "run_isa_check.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if [[ -z "$compiler" || -z "$workdir" ]]; then
  echo "run_isa_check.sh: --compiler and --workdir are required" >&2
  exit 2
fi

if ! command -v "$compiler" >/dev/null 2>&1; then
  echo "skipped: ${tool:-$compiler} not found"
  exit 77
fi

rm -rf "$workdir" && mkdir -p "$workdir" && cd "$workdir" || exit 1
if [[ -n "$collect" && "$collect" == */* ]]; then
  mkdir -p "${collect%/*}"  # nvcc -keep-dir must exist
fi

printf '+'
printf ' %q' "$compiler" "$@"
echo
if ! "$compiler" "$@"; then
  echo "FAILED: $tool could not compile"
  exit 1
fi

if [[ -z "$check" ]]; then
  echo "ok: $tool compiled"
  exit 0
fi

if [[ -n "$collect" ]]; then
  shopt -s nullglob
  # shellcheck disable=SC2206  # the glob must expand here
  parts=($collect)
  if [[ ${#parts[@]} -eq 0 ]]; then
    echo "FAILED: $tool produced no assembly matching '$collect'"
    exit 1
  fi
  : >"$asm"
  for part in "${parts[@]}"; do
    printf '// ==== %s\n' "$part" >>"$asm"
    cat "$part" >>"$asm"
  done
fi
if [[ ! -s "$asm" ]]; then
  echo "FAILED: no assembly at $asm"
  exit 1
fi

echo "+ check $check $asm ${check_args[*]}"
case "$check" in
  *.py) python3 "$check" "$asm" "${check_args[@]}" ;;
  *) bash "$check" "$asm" "${check_args[@]}" ;;
esac
rc=$?
if [[ $rc -ne 0 ]]; then
  echo "FAILED: assembly check $check (exit $rc)"
  exit 1
fi
echo "ok: $tool compiled and the assembly check passed"
