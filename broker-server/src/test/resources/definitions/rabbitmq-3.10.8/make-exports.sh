#!/usr/bin/env bash
# How the exports beside this script were made (README.md): Debian's rabbitmq-server 3.10.8 on non-default ports,
# filled through its HTTP API and rabbitmqctl, exported both ways, then stopped. Run as root from an empty
# directory that the rabbitmq user can read; writes the three JSON files there.
set -euo pipefail
dir=$(pwd)
export RABBITMQ_NODENAME=rmqimport@localhost RABBITMQ_NODE_PORT=35672 RABBITMQ_DIST_PORT=35673 ERL_EPMD_PORT=43691
export RABBITMQ_MNESIA_BASE=$dir/mnesia RABBITMQ_LOG_BASE=$dir/log RABBITMQ_CONFIG_FILE=$dir/rabbitmq
export RABBITMQ_ENABLED_PLUGINS_FILE=$dir/enabled_plugins RABBITMQ_PID_FILE=$dir/pid
export RABBITMQ_CONF_ENV_FILE=$dir/rabbitmq-env.conf RABBITMQ_ADVANCED_CONFIG_FILE=$dir/advanced.config
export RABBITMQ_FEATURE_FLAGS_FILE=$dir/mnesia/ff RABBITMQ_USE_LONGNAME=false
printf 'listeners.tcp.default = 35672\nmanagement.tcp.port = 35674\nmanagement.tcp.ip = 127.0.0.1\nloopback_users = none\n' \
    > rabbitmq.conf
echo '[rabbitmq_management,rabbitmq_federation,rabbitmq_shovel].' > enabled_plugins
touch rabbitmq-env.conf && echo '[].' > advanced.config
mkdir -p mnesia log out && chown rabbitmq:rabbitmq mnesia log out
rabbitmq-server > server.out 2>&1 &
rabbitmqctl await_startup

A="curl -s -u guest:guest -H content-type:application/json"
H=http://127.0.0.1:35674/api
$A -X PUT $H/vhosts/prod -d '{"description":"production","tags":"prod,eu","defaultqueuetype":"quorum"}'
$A -X PUT $H/vhosts/streams -d '{"description":"stream apps","tags":"","defaultqueuetype":"stream"}'
$A -X PUT $H/vhosts/plain -d '{}'
$A -X PUT $H/users/alice -d '{"password":"alice-pw","tags":"management"}'
$A -X PUT $H/users/ops -d '{"password":"ops-pw","tags":"administrator,monitoring"}'
$A -X PUT $H/users/pm -d '{"password":"pm-pw","tags":"policymaker"}'
# sha512 and md5 hashes as RabbitMQ itself writes them
H512=$(rabbitmqctl eval 'io:format("~s", [base64:encode(rabbit_password:hash(rabbit_password_hashing_sha512, <<"bob-pw">>))]).' | head -1 | sed 's/ok$//')
HMD5=$(rabbitmqctl eval 'io:format("~s", [base64:encode(rabbit_password:hash(rabbit_password_hashing_md5, <<"carol-pw">>))]).' | head -1 | sed 's/ok$//')
echo "sha512=$H512 md5=$HMD5"
$A -X PUT $H/users/bob -d "{\"password_hash\":\"$H512\",\"hashing_algorithm\":\"rabbit_password_hashing_sha512\",\"tags\":\"\"}"
$A -X PUT $H/users/carol -d "{\"password_hash\":\"$HMD5\",\"hashing_algorithm\":\"rabbit_password_hashing_md5\",\"tags\":\"\"}"
for v in %2F prod streams plain; do for u in alice ops bob carol; do $A -X PUT $H/permissions/$v/$u -d '{"configure":".*","write":".*","read":".*"}'; done; done
$A -X PUT $H/permissions/prod/pm -d '{"configure":"","write":"","read":"^pm\\."}'
$A -X PUT $H/topic-permissions/prod/alice -d '{"exchange":"amq.topic","write":"^alice\\.","read":".*"}'
$A -X PUT $H/topic-permissions/%2F/bob -d '{"exchange":"events","write":"^bob\\.","read":"^bob\\."}'
# policies
$A -X PUT $H/policies/%2F/dlx -d '{"pattern":"^orders\\.","apply-to":"queues","priority":1,"definition":{"dead-letter-exchange":"dlx","message-ttl":60000,"max-length":1000,"overflow":"reject-publish"}}'
$A -X PUT $H/policies/%2F/ae -d '{"pattern":"^events$","apply-to":"exchanges","priority":0,"definition":{"alternate-exchange":"unrouted"}}'
$A -X PUT $H/policies/prod/qq -d '{"pattern":".*","apply-to":"queues","priority":2,"definition":{"delivery-limit":5,"dead-letter-strategy":"at-least-once","overflow":"reject-publish","dead-letter-exchange":"dlx"}}'
$A -X PUT $H/policies/streams/retention -d '{"pattern":".*","apply-to":"queues","priority":0,"definition":{"max-age":"7D","stream-max-segment-size-bytes":50000000,"max-length-bytes":1000000000}}'
$A -X PUT $H/policies/%2F/lazy -d '{"pattern":"^lazy\\.","apply-to":"queues","priority":0,"definition":{"queue-mode":"lazy","ha-mode":"all","expires":3600000}}'
# operator policies
$A -X PUT $H/operator-policies/%2F/limits -d '{"pattern":".*","apply-to":"queues","priority":0,"definition":{"max-length":100000,"message-ttl":86400000}}'
$A -X PUT $H/operator-policies/prod/qq-limits -d '{"pattern":".*","apply-to":"queues","priority":1,"definition":{"delivery-limit":20,"max-in-memory-length":1000}}'
# vhost limits, user limits
$A -X PUT $H/vhost-limits/prod/max-connections -d '{"value":100}'
$A -X PUT $H/vhost-limits/prod/max-queues -d '{"value":500}'
$A -X PUT $H/user-limits/alice/max-channels -d '{"value":50}'
# global parameters: cluster_name is always there; add a map-valued one and a string one
rabbitmqctl set_global_parameter cluster_tags '{"region":"eu-west","env":"test"}'
rabbitmqctl set_global_parameter migration_note '"moved from rabbitmq"'
# vhost parameters of components we do not have (federation/shovel need plugins): enable the plugins
# exchanges
$A -X PUT $H/exchanges/%2F/events -d '{"type":"topic","durable":true,"auto_delete":false,"internal":false,"arguments":{}}'
$A -X PUT $H/exchanges/%2F/dlx -d '{"type":"fanout","durable":true}'
$A -X PUT $H/exchanges/%2F/unrouted -d '{"type":"fanout","durable":true}'
$A -X PUT $H/exchanges/%2F/hidden -d '{"type":"direct","durable":true,"internal":true}'
$A -X PUT $H/exchanges/%2F/hdr -d '{"type":"headers","durable":true,"arguments":{"alternate-exchange":"unrouted"}}'
$A -X PUT $H/exchanges/prod/dlx -d '{"type":"fanout","durable":true}'
$A -X PUT $H/exchanges/prod/work -d '{"type":"direct","durable":true}'
# queues
$A -X PUT $H/queues/%2F/orders.eu -d '{"durable":true,"arguments":{"x-max-priority":10}}'
$A -X PUT $H/queues/%2F/lazy.archive -d '{"durable":true,"arguments":{"x-queue-mode":"lazy"}}'
$A -X PUT $H/queues/%2F/dead -d '{"durable":true}'
$A -X PUT $H/queues/%2F/audit -d '{"durable":true,"arguments":{"x-queue-type":"quorum","x-quorum-initial-group-size":1}}'
$A -X PUT $H/queues/%2F/clicks -d '{"durable":true,"arguments":{"x-queue-type":"stream","x-max-age":"1D"}}'
$A -X PUT $H/queues/%2F/transient -d '{"durable":false,"auto_delete":true}'
$A -X PUT $H/queues/prod/jobs -d '{"durable":true,"arguments":{}}'
$A -X PUT $H/queues/prod/jobs.classic -d '{"durable":true,"arguments":{"x-queue-type":"classic"}}'
$A -X PUT $H/queues/prod/dead -d '{"durable":true,"arguments":{"x-queue-type":"quorum","x-delivery-limit":3}}'
$A -X PUT $H/queues/streams/ticks -d '{"durable":true,"arguments":{}}'
$A -X PUT $H/queues/plain/inbox -d '{"durable":true,"arguments":{"x-message-ttl":30000}}'
# bindings
$A -X POST $H/bindings/%2F/e/events/q/orders.eu -d '{"routing_key":"order.eu.#","arguments":{}}'
$A -X POST $H/bindings/%2F/e/dlx/q/dead -d '{"routing_key":"","arguments":{}}'
$A -X POST $H/bindings/%2F/e/hidden/q/dead -d '{"routing_key":"hidden","arguments":{}}'
$A -X POST $H/bindings/%2F/e/events/e/hidden -d '{"routing_key":"audit.#","arguments":{}}'
$A -X POST $H/bindings/%2F/e/hdr/q/audit -d '{"routing_key":"","arguments":{"x-match":"any","kind":"audit"}}'
$A -X POST $H/bindings/%2F/e/events/q/clicks -d '{"routing_key":"click.#","arguments":{}}'
$A -X POST $H/bindings/prod/e/work/q/jobs -d '{"routing_key":"job","arguments":{}}'
$A -X POST $H/bindings/prod/e/dlx/q/dead -d '{"routing_key":"","arguments":{}}'
$A -X PUT $H/parameters/federation-upstream/prod/origin -d '{"value":{"uri":"amqp://origin.example.com","expires":3600000}}'
$A -X PUT $H/parameters/shovel/%2F/move-dead -d '{"value":{"src-protocol":"amqp091","src-uri":"amqp://","src-queue":"dead","dest-protocol":"amqp091","dest-uri":"amqp://","dest-queue":"orders.eu"}}'

rabbitmqctl export_definitions "$dir/out/rabbitmqctl-export_definitions.json"
cp out/rabbitmqctl-export_definitions.json .
curl -s -u guest:guest $H/definitions > api-definitions.json
curl -s -u guest:guest $H/definitions/prod > api-definitions-prod.json
rabbitmqctl stop
epmd -kill   # the Erlang port mapper the node started, on ERL_EPMD_PORT
