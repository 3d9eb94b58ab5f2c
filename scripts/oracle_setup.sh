#!/usr/bin/env bash
# Fetch Apache Hudi (the test oracle) for one Hudi version: its Spark bundle from Maven
# Central (through mvn) and a virtual environment with the PySpark version that bundle is
# built against. Both go into a cache folder reused across runs and clones:
#   ${HOODIE_ORACLE_CACHE:-$HOME/.cache/hoodie-oracle}/jars/<bundle>.jar
#   ${HOODIE_ORACLE_CACHE:-$HOME/.cache/hoodie-oracle}/venv-pyspark-<x.y.z>/
# (and Maven's own ~/.m2). A second call finds both and downloads nothing.
#
# Usage: scripts/oracle_setup.sh HUDI_VERSION     (0.15.0 or 1.2.0)
# On success the last two lines on stdout are "python=<path>" and "jar=<path>".
# Exit status 3: a download failed (no Maven Central or PyPI); the tests that need
# Apache Hudi skip with the message on stderr. Any other failure is an error.
set -euo pipefail
cd "$(dirname "$0")/.."

hudi_version="${1:?usage: scripts/oracle_setup.sh HUDI_VERSION}"
# The bundle of each Hudi version and the Spark it is built against (the spark35.version
# of Hudi's pom). Hudi 1.x's bundles for Spark 4 (hudi-spark4.0-bundle_2.13) are not on
# Maven Central, so the 1.x line runs on its Spark 3.5 bundle.
case "$hudi_version" in
  0.15.0) artifact=hudi-spark3.5-bundle_2.12; pyspark=3.5.1 ;;
  1.2.0) artifact=hudi-spark3.5-bundle_2.12; pyspark=3.5.5 ;;
  *) echo "oracle_setup: unknown Hudi version $hudi_version (known: 0.15.0, 1.2.0)" >&2; exit 2 ;;
esac

cache="${HOODIE_ORACLE_CACHE:-$HOME/.cache/hoodie-oracle}"
mkdir -p "$cache/jars"
# Several test runs may set up at once: one at a time per cache folder.
exec 9>"$cache/.lock"
flock 9

unreachable() {
  echo "oracle_setup: $1" >&2
  exit 3
}

jar="$cache/jars/$artifact-$hudi_version.jar"
if [ ! -s "$jar" ]; then
  command -v mvn >/dev/null || unreachable "mvn not found (needed to fetch org.apache.hudi:$artifact:$hudi_version)"
  # --strict-checksums: a jar whose checksum does not match Maven Central's is refused
  if ! mvn -B -q --strict-checksums org.apache.maven.plugins:maven-dependency-plugin:3.6.1:copy \
      -Dartifact="org.apache.hudi:$artifact:$hudi_version" -DoutputDirectory="$cache/jars.tmp" >"$cache/mvn.log" 2>&1; then
    unreachable "could not fetch org.apache.hudi:$artifact:$hudi_version from Maven Central: $(grep -m1 -E 'ERROR' "$cache/mvn.log" || tail -n1 "$cache/mvn.log")"
  fi
  mv "$cache/jars.tmp/$artifact-$hudi_version.jar" "$jar"
  rmdir "$cache/jars.tmp" 2>/dev/null || true
fi

venv="$cache/venv-pyspark-$pyspark"
if [ ! -f "$venv/.installed" ]; then
  # built beside its final place and renamed, so a killed set-up leaves no half venv
  rm -rf "$venv.tmp"
  "${PYTHON:-python3}" -m venv "$venv.tmp"
  if ! "$venv.tmp/bin/python" -m pip install --quiet --disable-pip-version-check --retries 2 "pyspark==$pyspark" >"$cache/pip.log" 2>&1; then
    rm -rf "$venv.tmp"
    unreachable "could not install pyspark==$pyspark from PyPI: $(tail -n1 "$cache/pip.log")"
  fi
  rm -rf "$venv"
  # (the venv's console scripts keep the old folder in their first line; only
  # bin/python is used, which works wherever the folder is)
  mv "$venv.tmp" "$venv"
  touch "$venv/.installed"
fi

echo "python=$venv/bin/python"
echo "jar=$jar"
