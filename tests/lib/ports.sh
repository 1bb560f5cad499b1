# tests/lib/ports.sh: the profiles' PyTorch test ports, read from the records (sourced; tests/README.md).
#
# A script that runs the test ports takes them from the records, never from a
# list of its own, so that a new record (spec/profiles/NAME.json) has its port
# run with no edit: `muonref profile --test-ports` prints one line per record,
#   NAME FILE:CLASS ADAPTER MODE NS_FORMAT CONSTRUCTOR
# (FILE relative to the source tree; spec/profiles/README.md, "test_port").
#
#   . "$srcdir/tests/lib/ports.sh"    # needs $muonref and $srcdir
#   ports_read || exit 1          # reads the records of $srcdir/spec/profiles once; prints why it cannot
#   port_profiles                 # every profile, in the records' order (one word each)
#   port_of NAME                  # "$srcdir/FILE:CLASS ADAPTER NS_FORMAT"; empty for an unknown NAME
#   port_mode NAME                # the mode the port runs its own profile in (raw or neutral)
#
# MUONREF_RECORDS=DIR reads the records of DIR instead (a tree with a record
# of its own; tests/scripts/profile-file.sh).

ports_read() {
  _ports=$("$muonref" profile --test-ports --records "${MUONREF_RECORDS:-$srcdir/spec/profiles}" 2>&1) || {
    echo "ERROR: $muonref profile --test-ports cannot list the test ports: $_ports"
    return 1
  }
  [ -n "$_ports" ] || { echo "ERROR: $muonref profile --test-ports lists no test port"; return 1; }
}

# _port_field NAME N: field N of NAME's line (1 NAME, 2 FILE:CLASS, 3 ADAPTER, 4 MODE, 5 NS_FORMAT, 6 CONSTRUCTOR),
# nothing for an unknown NAME.  The shell's builtins only (an awk per call cost the scripts
# that look up hundreds of runs seconds); the lines' fields are single words (no glob characters)
_port_field() {
  _pf_name=$1 _pf_n=$2 _pf_ifs=$IFS
  IFS='
'
  for _pf_line in $_ports; do
    IFS=' '
    set -- $_pf_line
    if [ "$1" = "$_pf_name" ]; then
      [ "$_pf_n" -le $# ] && eval "printf '%s\\n' \"\${$_pf_n}\"" || printf '\n'
      break
    fi
  done
  IFS=$_pf_ifs
}

port_profiles() {
  _pf_ifs=$IFS
  IFS='
'
  for _pf_line in $_ports; do
    printf '%s\n' "${_pf_line%% *}"
  done
  IFS=$_pf_ifs
}

port_of() {
  _f=$(_port_field "$1" 2)
  [ -n "$_f" ] && echo "$srcdir/$_f $(_port_field "$1" 3) $(_port_field "$1" 5)"
}

port_mode() { _port_field "$1" 4; }
