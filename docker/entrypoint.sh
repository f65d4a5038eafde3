#!/bin/sh
# The SkiffMQ image's entrypoint (docker/Dockerfile): starts the broker in the foreground as this process (exec),
# so the container's SIGTERM reaches the JVM and its graceful shutdown runs (docs/configuration.md).
#   SKIFFMQ_HOME  where skiffmq.jar and jvm.options are (default /opt/skiffmq; broker-server/target in a checkout)
#   JAVA_OPTS     more JVM flags, e.g. -Xmx1g or -Dskiffmq.log-format=json
# Arguments are broker settings (--port=5673, --help); SKIFFMQ_* variables and skiffmq.conf are settings too.
# ulimit's -H and -n are outside POSIX, but dash (the image's /bin/sh) and busybox sh both have them
# shellcheck disable=SC3045
set -eu
# the JVM flags and JAVA_OPTS are split into words on purpose; no word is a file pattern
set -f
home="${SKIFFMQ_HOME:-/opt/skiffmq}"
# Open files: each connection holds one. Raise the soft limit to SKIFFMQ_ULIMIT_NOFILE, else to the hard limit
# (docker's default is 1048576; --ulimit nofile=N:N sets it), as bin/skiffmq does; say so when it stays below 65,536
nofile="${SKIFFMQ_ULIMIT_NOFILE:-$(ulimit -H -n)}"
if ! ulimit -n "$nofile" 2>/dev/null; then
  echo "skiffmq: cannot raise the open file limit to $nofile (hard limit $(ulimit -H -n))" >&2
fi
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 65536 ]; then
  echo "skiffmq: the open file limit is $(ulimit -n): fewer connections than that can be open;" \
    "raise it with docker run --ulimit nofile=65536:65536" >&2
fi
# jvm.options holds the JVM flags defined once in the root pom (Chronicle Queue's --add-opens/--add-exports)
# shellcheck disable=SC2046,SC2086
exec java $(cat "$home/jvm.options") ${JAVA_OPTS:-} -jar "$home/skiffmq.jar" "$@"
