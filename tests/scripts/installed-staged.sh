#!/bin/sh
# muonref test (make check, and so CI): tests/scripts/installed.sh -- the installed
# tree alone: vectors, fast path + JUnit, the driver, the pytest plugin, the
# man pages -- against a staged install of this build, so that CI runs it
# and not only `make installcheck`/`distcheck`.
#
# The stage: `make install DESTDIR=$tmp` (libtool refuses `prefix=` at
# install time for the libraries).  A DESTDIR install keeps the configured
# paths compiled into its files, so three are pointed at the stage:
#  - the binary's installed vectors: $MUONREF_VECTORS_DIR (vectors/format/files.c),
#    and its installed driver: $MUONREF_DRIVER (cli/datapath.h: an installed
#    binary never runs a build tree's driver);
#  - its libraries (run path = the configured libdir): LD_LIBRARY_PATH;
#  - the pytest plugin's loader names the configured drivers folder: the
#    install-pytest-plugin target is run again with torchdriverdir set to the
#    staged one.
# Everything else (driver, adapters, plugin, man pages, junit.xsd) is found
# relative to the stage as installed.  The stage is removed on exit.
# Exit 0 pass, 1 fail, 77 skip (no build folder given by make check).
builddir=${MUONREF_BUILDDIR:-}
src=${MUONREF_SRCDIR:-.}
[ -n "$builddir" ] && [ -f "$builddir/Makefile" ] || { echo "SKIP: run from make check (MUONREF_BUILDDIR)"; exit 77; }
stage=$(mktemp -d "${TMPDIR:-/tmp}/installed-stage.XXXXXX") || exit 1
trap 'rm -rf "$stage"' EXIT INT TERM
# the paths configure chose, from the Makefile itself
unset MAKEFLAGS MFLAGS
${MAKE:-make} -s -C "$builddir" --no-print-directory print-install-dirs >"$stage/dirs" || exit 1
var() { sed -n "s|^$1=||p" "$stage/dirs"; }
bindir=$(var bindir) libdir=$(var libdir) pkgdatadir=$(var pkgdatadir) mandir=$(var mandir)
plugindir=$(var pytestplugindir) torchdriverdir=$(var torchdriverdir)
for v in "$bindir" "$libdir" "$pkgdatadir" "$mandir" "$plugindir" "$torchdriverdir"; do
  [ -n "$v" ] || { echo "FAIL: could not read the install folders from $builddir/Makefile"; exit 1; }
done
${MAKE:-make} -C "$builddir" install DESTDIR="$stage" >"$stage/install.log" 2>&1 ||
  { tail -n 20 "$stage/install.log"; echo "FAIL: make install DESTDIR=$stage"; exit 1; }
if [ "$plugindir" != no ]; then
  ${MAKE:-make} -C "$builddir" install-pytest-plugin DESTDIR="$stage" torchdriverdir="$stage$torchdriverdir" \
    >>"$stage/install.log" 2>&1 || { tail -n 20 "$stage/install.log"; echo "FAIL: the staged pytest plugin"; exit 1; }
  plugin=$stage$plugindir
else plugin=no; fi
rm -f "$stage/install.log" "$stage/dirs"
MUONREF_VECTORS_DIR=$stage$pkgdatadir/vectors LD_LIBRARY_PATH=$stage$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
MUONREF_DRIVER=$stage$torchdriverdir/torch_driver.py
export MUONREF_VECTORS_DIR LD_LIBRARY_PATH MUONREF_DRIVER
# the installed tree alone: not the build's ./muonref
unset MUONREF
sh "$src/tests/scripts/installed.sh" "$stage$bindir" "$stage$pkgdatadir" "$stage$mandir" "$plugin" "$src"
