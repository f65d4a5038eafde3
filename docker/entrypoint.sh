#!/bin/sh
# The SkiffMQ image's entrypoint (docker/Dockerfile): starts the broker in the foreground as this process (exec),
# so the container's SIGTERM reaches the JVM and its graceful shutdown runs (docs/configuration.md).
#   SKIFFMQ_HOME  where skiffmq.jar and jvm.options are (default /opt/skiffmq; broker-server/target in a checkout)
#   JAVA_OPTS     more JVM flags, e.g. -Xmx1g or -Dskiffmq.log-format=json
# Arguments are broker settings (--port=5673, --help); SKIFFMQ_* variables and skiffmq.conf are settings too.
set -eu
# the JVM flags and JAVA_OPTS are split into words on purpose; no word is a file pattern
set -f
home="${SKIFFMQ_HOME:-/opt/skiffmq}"
# jvm.options holds the JVM flags defined once in the root pom (Chronicle Queue's --add-opens/--add-exports)
# shellcheck disable=SC2046,SC2086
exec java $(cat "$home/jvm.options") ${JAVA_OPTS:-} -jar "$home/skiffmq.jar" "$@"
