"""docker/check's part for the Grafana dashboards (docs/metrics.md, "Grafana"): run from the repository root by the
check's virtualenv Python.

1. The files: each dashboard in docker/grafana/dashboards is JSON with a uid, unique panel ids and a query in each
   panel, all on the data source docker/grafana/provisioning provides, and docker/compose.yaml mounts both.
2. A running broker: bin/skiffmq (which builds the jar when missing) started on free ports with a data directory of its own,
   given traffic through its HTTP API (a durable queue with persistent messages, a stream), then scraped: every
   metric our dashboard queries, and every one docker/grafana/rabbitmq-dashboards.txt lists (RabbitMQ's
   dashboards' names) with its labels, is served.
3. The queries, where Debian's prometheus is installed (apt-get install prometheus): a Prometheus of our own
   scrapes that broker every second, and each query of our dashboard must parse and return data; so must those of
   RabbitMQ's Overview and Stream dashboards (but the ones reading a metric listed absent) when RABBITMQ_DASHBOARDS
   names a folder that holds them (rabbitmq-server's deps/rabbitmq_prometheus/docker/grafana/dashboards).
"""
import base64
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request

import yaml

DASHBOARDS = "docker/grafana/dashboards"
PROVISIONING = "docker/grafana/provisioning"
RABBITMQ_LIST = "docker/grafana/rabbitmq-dashboards.txt"
METRIC = re.compile(r"\b(?:rabbitmq|skiffmq|jvm|process|netty|system)_[a-z0-9_]+")
LABEL_PARTS = re.compile(r"\{[^}]*}|\b(?:by|on|group_left|without)\s*\([^)]*\)")
SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)})?\s+\S+")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def fail(message):
    print(f"docker/check: FAILED: {message}", file=sys.stderr)
    sys.exit(1)


def queries(dashboard):
    """Every expr of the dashboard's panels, and its variables' queries."""
    found = []

    def walk(node):
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("expr", "definition") and isinstance(value, str):
                    found.append(value)
                else:
                    walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(dashboard)
    return found


def metric_names(query):
    """The metric names a query reads: label names (matchers, by/on lists, label_values' second) taken out."""
    query = re.sub(r"label_values\(([^,{]+)[^)]*\)", r"\1", query)
    return set(METRIC.findall(LABEL_PARTS.sub(" ", query)))


def check_files():
    with open(f"{PROVISIONING}/datasources/prometheus.yml") as f:
        sources = yaml.safe_load(f)["datasources"]
    uids = {s["uid"] for s in sources}
    with open(f"{PROVISIONING}/dashboards/skiffmq.yml") as f:
        provider_path = yaml.safe_load(f)["providers"][0]["options"]["path"]
    with open("docker/compose.yaml") as f:
        grafana = yaml.safe_load(f)["services"]["grafana"]
    mounts = {v.split(":")[1]: v.split(":")[0] for v in grafana["volumes"]}
    if mounts.get(provider_path) != "./grafana/dashboards" or mounts.get("/etc/grafana/provisioning") != \
            "./grafana/provisioning":
        fail(f"compose.yaml's grafana mounts {mounts}, not the dashboards at {provider_path} and the provisioning")
    home = grafana["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
    if not home.startswith(provider_path + "/") or not os.path.isfile(f"{DASHBOARDS}/{os.path.basename(home)}"):
        fail(f"the home dashboard {home} is not one of {DASHBOARDS}")
    ours = {}
    for name in sorted(os.listdir(DASHBOARDS)):
        with open(f"{DASHBOARDS}/{name}") as f:
            try:
                dashboard = json.load(f)
            except json.JSONDecodeError as e:
                fail(f"{name} is no JSON: {e}")
        if not dashboard.get("uid") or not dashboard.get("title"):
            fail(f"{name} has no uid or no title")
        ids = [p["id"] for p in dashboard["panels"]]
        if len(ids) != len(set(ids)):
            fail(f"{name} has panel ids twice")
        for panel in dashboard["panels"]:
            if panel["type"] == "row":
                continue
            if panel.get("datasource", {}).get("uid") not in uids or not panel.get("targets"):
                fail(f"{name}: panel {panel['title']!r} has no query on the provisioned data source {uids}")
            for target in panel["targets"]:
                if target.get("datasource", {}).get("uid") not in uids or not target.get("expr"):
                    fail(f"{name}: panel {panel['title']!r} has a query without expr or data source")
        ours[name] = dashboard
    print(f"docker/check: dashboards {sorted(ours)}: JSON, panels and provisioning agree")
    return ours


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(what, check, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except OSError:
            pass
        time.sleep(0.2)
    fail(f"timed out waiting for {what}")


def http(method, url, body=None, user="guest"):
    request = urllib.request.Request(url, method=method, data=None if body is None else json.dumps(body).encode())
    request.add_header("content-type", "application/json")
    if user:
        request.add_header("authorization", "Basic " + base64.b64encode(f"{user}:{user}".encode()).decode())
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.read().decode()


def traffic(api):
    """Queues and messages through the HTTP API: per-queue and per-stream series, and journal syncs."""
    http("PUT", f"{api}/queues/%2F/dashboard-check", {"durable": True})
    http("PUT", f"{api}/queues/%2F/dashboard-check-stream", {"durable": True, "arguments": {"x-queue-type": "stream"}})
    for queue in ("dashboard-check", "dashboard-check-stream"):
        for i in range(3):
            answer = http("POST", f"{api}/exchanges/%2F/amq.default/publish", {
                "properties": {"delivery_mode": 2}, "routing_key": queue, "payload": f"m{i}",
                "payload_encoding": "string"})
            if '"routed":true' not in answer.replace(" ", ""):
                fail(f"a message to {queue} was not routed: {answer}")
    http("POST", f"{api}/queues/%2F/dashboard-check/get", {"count": 1, "ackmode": "ack_requeue_false",
                                                          "encoding": "auto"})


def scrape(url):
    """The scrape's series: metric name -> the label sets of its samples."""
    series = {}
    for line in http("GET", url, user=None).splitlines():
        m = SAMPLE.match(line)
        if m:
            series.setdefault(m.group(1), []).append(dict(LABEL.findall(m.group(2) or "")))
    return series


def check_names(series, ours):
    missing = []
    for name, dashboard in ours.items():
        for query in queries(dashboard):
            missing += [f"{name}: {metric}" for metric in metric_names(query) if metric not in series]
    listed = 0
    with open(RABBITMQ_LIST) as f:
        for line in f:
            words = line.split()
            if not words or words[0].startswith("#"):
                continue
            if words[1] == "absent":
                if words[2] in series:
                    fail(f"{words[2]} is served now: take it off the absent list in {RABBITMQ_LIST}")
                continue
            listed += 1
            if words[1] not in series:
                missing.append(f"RabbitMQ's {words[0]} dashboard: {words[1]}")
                continue
            for label in words[2:]:
                if not any(label in labels for labels in series[words[1]]):
                    missing.append(f"RabbitMQ's {words[0]} dashboard: {words[1]} without the label {label}")
    if missing:
        fail("queried, not served:\n  " + "\n  ".join(sorted(set(missing))))
    print(f"docker/check: the broker serves every metric our dashboards query and the {listed} of RabbitMQ's")


def check_queries(metrics_port, ours, work):
    if not shutil.which("prometheus"):
        print("docker/check: no prometheus here (Debian: apt-get install prometheus): the queries are not run")
        return
    port = free_port()
    config = f"{work}/prometheus.yml"
    with open(config, "w") as f:
        yaml.safe_dump({"global": {"scrape_interval": "1s"}, "scrape_configs": [
            {"job_name": "skiffmq", "static_configs": [{"targets": [f"127.0.0.1:{metrics_port}"]}]}]}, f)
    log = open(f"{work}/prometheus.log", "w")
    prometheus = subprocess.Popen(["prometheus", f"--config.file={config}", f"--storage.tsdb.path={work}/tsdb",
                                   f"--web.listen-address=127.0.0.1:{port}"], stdout=log, stderr=log)
    api = f"http://127.0.0.1:{port}/api/v1/query?query="
    try:
        def scraped_thrice():
            answer = json.loads(http("GET", api + urllib.parse.quote("count_over_time(up[1m])"), user=None))
            result = answer["data"]["result"]
            return result and float(result[0]["value"][1]) >= 3
        wait_for("three scrapes by Prometheus", scraped_thrice)
        cluster = json.loads(http("GET", api + "rabbitmq_identity_info", user=None))["data"]["result"][0]["metric"][
            "rabbitmq_cluster"]
        variables = {"$__rate_interval": "1m", "$__range": "5m", "$node": ".*", "$rabbitmq_cluster": cluster,
                     "$namespace": "", "$endpoint": "per-object"}
        run_queries(api, ours, variables, "our dashboards'")
        theirs = os.environ.get("RABBITMQ_DASHBOARDS")
        if theirs:
            # RabbitMQ's own dashboards, from a checkout of rabbitmq-server (their JSON is not kept here)
            dashboards = {}
            for name in ("RabbitMQ-Overview.json", "RabbitMQ-Stream.json"):
                with open(os.path.join(theirs, name)) as f:
                    dashboards[name] = json.load(f)
            absent = [line.split()[2] for line in open(RABBITMQ_LIST) if line.split()[1:2] == ["absent"]]
            run_queries(api, dashboards, variables, "RabbitMQ's dashboards'", absent)
    finally:
        prometheus.terminate()
        prometheus.wait(30)


def run_queries(api, dashboards, variables, whose, absent=()):
    """Runs every query of {dashboards} with {variables} set; each must parse, and return data unless it reads an
    absent metric."""
    empty = []
    count = 0
    for name, dashboard in dashboards.items():
        for query in queries(dashboard):
            if "(" not in query and "{" not in query:
                continue  # a data source variable's type ("prometheus"), not a query
            bare = query
            for variable, value in variables.items():
                bare = bare.replace(variable, value)
            if bare.startswith("label_values("):
                metric = re.match(r"label_values\((.+),\s*(\w+)\)$", bare)
                bare = f"count by({metric.group(2)}) ({metric.group(1)})"
            try:
                answer = json.loads(http("GET", api + urllib.parse.quote(bare), user=None))
            except urllib.error.HTTPError as e:
                fail(f"{name}: Prometheus refuses {query!r}: {e.read().decode()}")
            count += 1
            if not answer["data"]["result"] and not any(metric in query for metric in absent):
                empty.append(f"{name}: {query}")
    if empty:
        fail("these queries return nothing from a running broker:\n  " + "\n  ".join(empty))
    print(f"docker/check: Prometheus ran {whose} {count} queries against the broker: each has data")


def main():
    ours = check_files()
    with tempfile.TemporaryDirectory(prefix="skiffmq-dashboards-") as work:
        amqp, api_port, metrics_port, stream = free_port(), free_port(), free_port(), free_port()
        log = open(f"{work}/broker.log", "w")
        # bin/skiffmq: the root pom's JVM flags (Chronicle's --add-opens), and the jar built when missing or stale
        broker = subprocess.Popen(["bin/skiffmq", "--bind=127.0.0.1", f"--port={amqp}",
                                   f"--management-port={api_port}", f"--prometheus-port={metrics_port}",
                                   f"--stream-port={stream}", f"--data-dir={work}/data"], stdout=log, stderr=log)
        try:
            api = f"http://127.0.0.1:{api_port}/api"
            wait_for("the broker's HTTP API", lambda: broker.poll() is None and http("GET", f"{api}/overview"), 600)
            try:
                traffic(api)
            except urllib.error.HTTPError as e:
                fail(f"the HTTP API refused {e.url}: {e.code} {e.read().decode()}")
            check_names(scrape(f"http://127.0.0.1:{metrics_port}/metrics"), ours)
            check_queries(metrics_port, ours, work)
        except SystemExit:
            log.flush()
            with open(f"{work}/broker.log") as f:
                print("docker/check: the broker's log:\n" + f.read()[-3000:], file=sys.stderr)
            raise
        finally:
            broker.terminate()
            broker.wait(60)


if __name__ == "__main__":
    main()
