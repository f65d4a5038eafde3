# Parses a Prometheus text-format scrape (stdin) with prometheus_client's parser and prints one sample a line:
# name<TAB>labels as k=v joined by ','<TAB>value. Used by MetricsTest.
import sys
from prometheus_client.parser import text_string_to_metric_families

for family in text_string_to_metric_families(sys.stdin.read()):
    for sample in family.samples:
        labels = ",".join(f"{k}={v}" for k, v in sorted(sample.labels.items()))
        print(f"{sample.name}\t{labels}\t{sample.value!r}")
