package io.skiffmq.server.metrics;

import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.registry.PrometheusScrapeRequest;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.skiffmq.cluster.ClusterNode;
import io.skiffmq.cluster.RaftReading;
import io.skiffmq.codec.stream.ResponseCode;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.alarm.ResourceAlarms;
import io.skiffmq.core.metrics.BrokerCounters;
import io.skiffmq.core.metrics.QueueCounters;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.server.Broker;
import io.skiffmq.store.Journal;
import io.skiffmq.store.JournalCounters;
import io.skiffmq.server.stream.StreamActivity;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The broker's own metrics, read at each scrape from the counters the broker keeps anyway (no meter per queue or
 * connection to create and remove): RabbitMQ's names where RabbitMQ has the metric, {@code skiffmq_*} otherwise.
 *
 * <ul>
 *   <li>the node: {@code rabbitmq_identity_info} (node, cluster, endpoint), {@code rabbitmq_build_info}, uptime,
 *       memory and disk as the alarms measure them against their limits, file descriptors, and
 *       {@code rabbitmq_alarms_memory_used_watermark} and {@code rabbitmq_alarms_free_disk_space_watermark} (1 while
 *       the alarm is up);
 *   <li>{@code rabbitmq_connections}, {@code rabbitmq_channels} (0-9-1 channels and AMQP 1.0 sessions),
 *       {@code rabbitmq_queues}, {@code rabbitmq_consumers}; connections and channels opened and closed, queues
 *       declared, created and deleted;
 *   <li>{@code rabbitmq_global_messages_*_total} by {@code protocol} ({@code amqp091}, {@code amqp10}, {@code stream}), as
 *       RabbitMQ's global counters; those of deliveries also by {@code queue_type} ({@code rabbit_classic_queue},
 *       {@code rabbit_stream_queue} for the stream protocol);
 *   <li>{@code rabbitmq_queue_messages_ready}, {@code _unacked}, {@code rabbitmq_queue_messages},
 *       {@code rabbitmq_queue_consumers} and {@code skiffmq_queue_messages_{published,delivered,redelivered,
 *       acknowledged,published_bytes,delivered_bytes}_total}: by {@code vhost} and {@code queue} when the scrape is per object, else summed over all
 *       queues with no label (as RabbitMQ's aggregated {@code /metrics});
 *   <li>{@code rabbitmq_connection_incoming_bytes_total}, {@code _outgoing_bytes_total}: all connections;
 *   <li>{@code rabbitmq_stream_segments}, as the queue metrics (per stream, or summed), and
 *       {@code rabbitmq_stream_consumer_max_offset_lag} (per stream, or the highest of all);
 *   <li>{@code rabbitmq_global_publishers} and {@code rabbitmq_global_consumers} by {@code protocol}, and the
 *       stream protocol's {@code rabbitmq_global_stream_error_*_total};
 *   <li>{@code skiffmq_journal_*} by {@code vhost}: records, bytes, syncs, segments on disk.
 * </ul>
 *
 * <p>A scrape is per object when its path is {@code /metrics/per-object}, or when it is {@code /metrics} and
 * {@code prometheus-per-queue-metrics} is on. Called on the metrics server's thread; everything it reads is safe
 * to read from any thread.
 */
final class BrokerCollector implements MultiCollector {
    static final String PER_OBJECT_PATH = "/metrics/per-object";
    private static final String[] PROTOCOLS = {BrokerCounters.AMQP091, BrokerCounters.AMQP10, BrokerCounters.STREAM};
    private static final String CLASSIC = "rabbit_classic_queue";
    /** The stream protocol's error codes RabbitMQ counts ({@code rabbit_stream_metrics.hrl}). */
    private static final java.util.List<ResponseCode> STREAM_ERRORS = java.util.Arrays.stream(ResponseCode.values())
        .filter(c -> c.code() >= ResponseCode.STREAM_DOES_NOT_EXIST.code()
            && c.code() <= ResponseCode.PUBLISHER_DOES_NOT_EXIST.code())
        .toList();

    private final Broker broker;
    private final boolean perQueueByDefault;
    /** Told of each journal at each scrape, so that one opened later (a new virtual host) is hooked up too. */
    private final Consumer<Map.Entry<String, Journal>> journalSeen;

    BrokerCollector(Broker broker, boolean perQueueByDefault, Consumer<Map.Entry<String, Journal>> journalSeen) {
        this.broker = broker;
        this.perQueueByDefault = perQueueByDefault;
        this.journalSeen = journalSeen;
    }

    @Override
    public MetricSnapshots collect() {
        return collect(perQueueByDefault);
    }

    @Override
    public MetricSnapshots collect(PrometheusScrapeRequest request) {
        boolean perObject = request != null && PER_OBJECT_PATH.equals(request.getRequestPath());
        return collect(perObject || perQueueByDefault);
    }

    MetricSnapshots collect(boolean perQueue) {
        Families f = new Families();
        node(f, perQueue);
        java.util.Set<ResourceAlarms.Resource> alarms = broker.alarms().active();
        f.gauge("rabbitmq_alarms_memory_used_watermark", "is the memory alarm in effect",
            alarms.contains(ResourceAlarms.Resource.MEMORY) ? 1 : 0);
        f.gauge("rabbitmq_alarms_free_disk_space_watermark", "is the disk free space alarm in effect",
            alarms.contains(ResourceAlarms.Resource.DISK) ? 1 : 0);
        f.gauge("rabbitmq_connections", "Connections currently open", broker.connectionCount());
        f.counter("rabbitmq_connections_opened", "Total number of connections opened", broker.connectionsOpened());
        f.gauge("skiffmq_connections_preauth", "Connections accepted that have not finished their handshake",
            broker.preAuth().count());
        f.counter("skiffmq_connections_refused_preauth", "Connections closed at once because "
            + "max-preauth-connections had not finished their handshake", broker.preAuth().refused());
        connectionEnds(f);
        protocolCounters(f);
        streamProtocol(f);
        streamConsumerLag(f, perQueue);
        queues(f, perQueue);
        raft(f, perQueue);
        io.skiffmq.core.metrics.QueueChurn churn = broker.queueChurn();
        f.counter("rabbitmq_queues_declared", "Total number of queues declared", churn.declaredCount());
        f.counter("rabbitmq_queues_created", "Total number of queues created", churn.createdCount());
        f.counter("rabbitmq_queues_deleted", "Total number of queues deleted", churn.deletedCount());
        journals(f);
        return f.build();
    }

    /**
     * Who the node is and what it has, as RabbitMQ's {@code identity_info}, {@code build_info} and node metrics:
     * RabbitMQ's dashboards join every query on {@code rabbitmq_identity_info}'s {@code rabbitmq_cluster},
     * {@code rabbitmq_node} and {@code rabbitmq_endpoint}. Memory and disk are what the alarms measure, against
     * their limits ({@code docs/alarms.md}).
     */
    private void node(Families f, boolean perQueue) {
        String node = broker.config().node();
        f.gauge("rabbitmq_identity_info", "RabbitMQ node & cluster identity info", 1, "rabbitmq_node", node,
            "rabbitmq_cluster", broker.clusterName(), "rabbitmq_endpoint", perQueue ? "per-object" : "aggregated");
        f.gauge("rabbitmq_build_info", "RabbitMQ & Erlang/OTP version info", 1,
            "rabbitmq_version", broker.config().rabbitmqVersion(), "product_name", "SkiffMQ",
            "product_version", io.skiffmq.server.config.BrokerConfig.SKIFFMQ_VERSION,
            // no Erlang: the JVM's version in its place, which RabbitMQ's dashboards show in that column
            "erlang_version", "JVM " + Runtime.version().feature());
        f.gauge("rabbitmq_erlang_uptime_seconds", "Node uptime",
            java.lang.management.ManagementFactory.getRuntimeMXBean().getUptime() / 1000.0);
        io.skiffmq.core.alarm.ResourceMonitor monitor = broker.resourceMonitor();
        f.gauge("rabbitmq_process_resident_memory_bytes", "Memory used in bytes (heap after the last GC and "
            + "direct buffers, as the memory alarm measures it)", monitor.memoryUsed());
        f.gauge("rabbitmq_resident_memory_limit_bytes", "Memory high watermark in bytes", monitor.memoryLimit());
        long diskFree = monitor.diskFree();
        if (diskFree >= 0) {
            f.gauge("rabbitmq_disk_space_available_bytes", "Disk space available in bytes", diskFree);
        }
        f.gauge("rabbitmq_disk_space_available_limit_bytes", "Free disk space low watermark in bytes",
            monitor.diskFreeLimit());
        if (java.lang.management.ManagementFactory.getOperatingSystemMXBean()
                instanceof com.sun.management.UnixOperatingSystemMXBean os) {
            f.gauge("rabbitmq_process_open_fds", "Open file descriptors", os.getOpenFileDescriptorCount());
            f.gauge("rabbitmq_process_max_fds", "Open file descriptors limit", os.getMaxFileDescriptorCount());
        }
    }

    /** How connections ended: RabbitMQ's total, and ours by {@link io.skiffmq.server.connection.ConnectionEnd}. */
    private void connectionEnds(Families f) {
        io.skiffmq.server.connection.ConnectionEnds ends = broker.ends();
        f.counter("rabbitmq_connections_closed", "Total number of connections closed or terminated", ends.total());
        for (io.skiffmq.server.connection.ConnectionEnd end : io.skiffmq.server.connection.ConnectionEnd.values()) {
            f.counter("skiffmq_connection_ends", "Connections that ended, by how they ended (ERROR-level "
                + "internal_error is a broker bug)", ends.count(end), "reason", end.label());
        }
    }

    /**
     * RabbitMQ's global gauges of publishers and consumers by protocol ({@code rabbit_global_counters}'
     * {@code publishers} and {@code consumers}): AMQP 0-9-1 and 1.0 count theirs in the connections' counters
     * ({@link io.skiffmq.core.metrics.ConnectionCounters}); the stream protocol's are counted over its open
     * connections.
     */
    private void streamProtocol(Families f) {
        long publishers = 0;
        long consumers = 0;
        for (io.skiffmq.server.connection.ClientConnection c : broker.connections()) {
            if (c instanceof io.skiffmq.server.stream.StreamConnectionHandler stream) {
                publishers += stream.publisherCount();
                consumers += stream.subscriptionCount();
            }
        }
        String[] p = {"protocol", BrokerCounters.STREAM};
        f.gauge("rabbitmq_global_publishers", "Current number of publishers", publishers, p);
        f.gauge("rabbitmq_global_consumers", "Current number of consumers", consumers, p);
        io.skiffmq.server.stream.StreamErrors errors = broker.streamErrors();
        for (ResponseCode code : STREAM_ERRORS) {
            // RabbitMQ's names: the code's, but vhost_access_failure for VIRTUAL_HOST_ACCESS_FAILURE
            String name = code == ResponseCode.VIRTUAL_HOST_ACCESS_FAILURE ? "vhost_access_failure"
                : code.name().toLowerCase(java.util.Locale.ROOT);
            f.counter("rabbitmq_global_stream_error_" + name, "Total number of stream protocol answers with the "
                + "error code " + name, errors.count(code), p);
        }
    }

    /**
     * {@code rabbitmq_stream_consumer_max_offset_lag}: the highest offset lag of the stream protocol's consumers
     * (RabbitMQ's {@code stream_consumer_metrics}, from {@code rabbit_stream_consumer_created}), per stream when the
     * scrape is per object, else over all of them (0 for none). Each connection is asked on its event loop; one that
     * does not answer within a second counts as having no consumers.
     */
    private void streamConsumerLag(Families f, boolean perQueue) {
        List<java.util.concurrent.CompletableFuture<StreamActivity>> answers = new java.util.ArrayList<>();
        List<String> vhosts = new java.util.ArrayList<>();
        for (io.skiffmq.server.connection.ClientConnection c : broker.connections()) {
            io.skiffmq.server.authz.Access opened = c.opened();
            if (c instanceof io.skiffmq.server.stream.StreamConnectionHandler stream && opened != null) {
                answers.add(stream.activity().completeOnTimeout(StreamActivity.NONE, 1,
                    java.util.concurrent.TimeUnit.SECONDS));
                vhosts.add(opened.vhost());
            }
        }
        String name = "rabbitmq_stream_consumer_max_offset_lag";
        String help = "Highest consumer offset lag";
        long max = 0;
        Map<List<String>, Long> byStream = new java.util.LinkedHashMap<>();
        for (int i = 0; i < answers.size(); i++) {
            for (StreamActivity.Consumer consumer : answers.get(i).join().consumers()) {
                max = Math.max(max, consumer.offsetLag());
                byStream.merge(List.of(vhosts.get(i), consumer.stream()), consumer.offsetLag(), Math::max);
            }
        }
        if (!perQueue) {
            f.gauge(name, help, max);
            return;
        }
        byStream.forEach((stream, lag) -> f.gauge(name, help, lag, "vhost", stream.get(0), "queue", stream.get(1)));
    }

    private void protocolCounters(Families f) {
        long in = 0;
        long out = 0;
        long channels = 0;
        long channelsOpened = 0;
        for (String protocol : PROTOCOLS) {
            BrokerCounters.Totals t = broker.counters().totals(protocol);
            in += t.bytesIn();
            channels += t.channels();
            channelsOpened += t.channelsOpened();
            out += t.bytesOut();
            String[] p = {"protocol", protocol};
            if (!protocol.equals(BrokerCounters.STREAM)) {
                f.gauge("rabbitmq_global_publishers", "Current number of publishers", t.publishers(), p);
                f.gauge("rabbitmq_global_consumers", "Current number of consumers", t.consumers(), p);
            }
            f.counter("rabbitmq_global_messages_received", "Total number of messages received from publishers",
                t.received(), p);
            f.counter("rabbitmq_global_messages_received_confirm",
                "Total number of messages received from publishers expecting confirmations", t.receivedConfirm(), p);
            f.counter("rabbitmq_global_messages_routed", "Total number of messages routed to queues or streams",
                t.routed(), p);
            f.counter("rabbitmq_global_messages_unroutable_dropped", "Total number of messages published as "
                + "non-mandatory into an exchange and dropped as unroutable", t.unroutableDropped(), p);
            f.counter("rabbitmq_global_messages_unroutable_returned", "Total number of messages published as "
                + "mandatory into an exchange and returned to the publisher as unroutable", t.unroutableReturned(), p);
            f.counter("rabbitmq_global_messages_confirmed", "Total number of messages confirmed to publishers",
                t.confirmed(), p);
            // the stream protocol reads streams only, as RabbitMQ labels its deliveries
            String[] pq = {"protocol", protocol, "queue_type", protocol.equals(BrokerCounters.STREAM)
                ? "rabbit_stream_queue" : CLASSIC};
            f.counter("rabbitmq_global_messages_delivered", "Total number of messages delivered to consumers",
                t.delivered(), pq);
            f.counter("rabbitmq_global_messages_delivered_consume_manual_ack", "Total number of messages delivered "
                + "to consumers using basic.consume with manual acknowledgment", t.deliveredConsumeManualAck(), pq);
            f.counter("rabbitmq_global_messages_delivered_consume_auto_ack", "Total number of messages delivered "
                + "to consumers using basic.consume with automatic acknowledgment", t.deliveredConsumeAutoAck(), pq);
            f.counter("rabbitmq_global_messages_delivered_get_manual_ack", "Total number of messages delivered "
                + "to consumers using basic.get with manual acknowledgment", t.deliveredGetManualAck(), pq);
            f.counter("rabbitmq_global_messages_delivered_get_auto_ack", "Total number of messages delivered "
                + "to consumers using basic.get with automatic acknowledgment", t.deliveredGetAutoAck(), pq);
            f.counter("rabbitmq_global_messages_get_empty",
                "Total number of times basic.get operations fetched no message", t.getEmpty(), pq);
            f.counter("rabbitmq_global_messages_redelivered", "Total number of messages redelivered to consumers",
                t.redelivered(), pq);
            f.counter("rabbitmq_global_messages_acknowledged", "Total number of messages acknowledged by consumers",
                t.acknowledged(), pq);
        }
        f.gauge("rabbitmq_channels", "Channels (AMQP 0-9-1) and sessions (AMQP 1.0) currently open", channels);
        f.counter("rabbitmq_channels_opened", "Total number of channels opened", channelsOpened);
        // every channel of a closed connection closed with it: those opened less those open now
        f.counter("rabbitmq_channels_closed", "Total number of channels closed", channelsOpened - channels);
        f.counter("rabbitmq_connection_incoming_bytes", "Total number of bytes received on connections", in);
        f.counter("rabbitmq_connection_outgoing_bytes", "Total number of bytes sent on connections", out);
    }

    /**
     * RabbitMQ 4.0's {@code ra_metrics} ({@code rabbitmq_raft_*}), in a cluster: per object, a row for each
     * replicated quorum queue this node is a member of ({@code vhost}, {@code queue}), with the figures of the queue
     * group it shares, and one for the metadata group ({@code raft_cluster="rabbitmq_metadata"}, Khepri's in
     * RabbitMQ); aggregated, those rows summed, and their commit latencies averaged, as RabbitMQ does.
     */
    private void raft(Families f, boolean perQueue) {
        io.skiffmq.server.cluster.ClusterMembership cluster = broker.cluster();
        if (cluster == null) {
            return;
        }
        Map<String, RaftReading> byGroup = new java.util.HashMap<>();
        cluster.raftReadings().forEach(r -> byGroup.put(r.group(), r));
        List<String[]> labels = new java.util.ArrayList<>();
        List<RaftReading> rows = new java.util.ArrayList<>();
        RaftReading metadata = byGroup.get(ClusterNode.METADATA_NAME);
        if (metadata != null) {
            labels.add(new String[] {"raft_cluster", metadata.group()});
            rows.add(metadata);
        }
        for (var queue : cluster.queues().groupedQueues()) {
            RaftReading reading = byGroup.get(queue.group());
            if (reading != null) {
                labels.add(new String[] {"vhost", queue.vhost(), "queue", queue.queue()});
                rows.add(reading);
            }
        }
        if (rows.isEmpty()) {
            return;
        }
        if (!perQueue) {
            double latency = rows.stream().mapToDouble(RaftReading::commitLatencySeconds).sum()
                / rows.size();
            rows = List.of(new RaftReading("", rows.stream().mapToLong(r -> r.term()).sum(),
                rows.stream().mapToLong(r -> r.snapshotIndex()).sum(),
                rows.stream().mapToLong(r -> r.lastAppliedIndex()).sum(),
                rows.stream().mapToLong(r -> r.commitIndex()).sum(),
                rows.stream().mapToLong(r -> r.lastWrittenIndex()).sum(), latency));
            labels = List.<String[]>of(new String[0]);
        }
        for (int i = 0; i < rows.size(); i++) {
            RaftReading r = rows.get(i);
            String[] l = labels.get(i);
            f.counter("rabbitmq_raft_term", "Current Raft term number", r.term(), l);
            f.gauge("rabbitmq_raft_log_snapshot_index", "Raft log snapshot index", r.snapshotIndex(), l);
            f.gauge("rabbitmq_raft_log_last_applied_index", "Raft log last applied index", r.lastAppliedIndex(), l);
            f.gauge("rabbitmq_raft_log_commit_index", "Raft log commit index", r.commitIndex(), l);
            f.gauge("rabbitmq_raft_log_last_written_index", "Raft log last written index", r.lastWrittenIndex(), l);
            f.gauge("rabbitmq_raft_entry_commit_latency_seconds", "Time taken for a log entry to be committed",
                r.commitLatencySeconds(), l);
        }
    }

    private void queues(Families f, boolean perQueue) {
        QueueTotals all = new QueueTotals();
        int queues = 0;
        for (VirtualHost vhost : broker.virtualHosts()) {
            for (Queue queue : vhost.queues()) {
                queues++;
                if (perQueue) {
                    QueueTotals one = new QueueTotals();
                    one.add(queue);
                    one.write(f, "vhost", vhost.name(), "queue", queue.name());
                }
                all.add(queue);
            }
        }
        f.gauge("rabbitmq_queues", "Queues available", queues);
        f.gauge("rabbitmq_consumers", "Consumers currently connected", all.consumers);
        if (!perQueue) {
            all.write(f);
        }
    }

    private void journals(Families f) {
        for (Map.Entry<String, Journal> e : broker.journals().entrySet()) {
            journalSeen.accept(e);
            JournalCounters c = e.getValue().counters();
            String[] v = {"vhost", e.getKey()};
            f.counter("skiffmq_journal_records_written", "Records written to the journal", c.records(), v);
            f.counter("skiffmq_journal_written_bytes", "Bytes of records written to the journal", c.bytes(), v);
            f.counter("skiffmq_journal_syncs", "Syncs (fsync) of the journal", c.syncs(), v);
            f.counter("skiffmq_journal_sync_time_seconds", "Time spent syncing the journal", c.syncNanos() / 1e9, v);
            f.counter("skiffmq_journal_segment_rolls", "Moves of the journal's writer to a new segment", c.rolls(), v);
            f.counter("skiffmq_journal_segment_roll_time_seconds", "Time the journal's writer spent moving to new "
                + "segments", c.rollNanos() / 1e9, v);
            f.gauge("skiffmq_journal_segments", "Journal segments on disk", e.getValue().segments().size(), v);
        }
    }

    /** One queue's numbers, or their sum over many. */
    private static final class QueueTotals {
        long ready;
        long unacked;
        long consumers;
        long published;
        long delivered;
        long redelivered;
        long acknowledged;
        long publishedBytes;
        long deliveredBytes;
        /** Streams among the queues added, and their segments ({@code rabbitmq_stream_segments}). */
        int streams;
        long segments;

        void add(Queue queue) {
            QueueCounters c = queue.counters();
            if (queue instanceof io.skiffmq.core.stream.StreamQueue stream) {
                streams++;
                segments += stream.store().segmentCount();
            }
            ready += queue.readyCount();
            unacked += queue.unackedCount();
            consumers += queue.consumerCount();
            published += c.published();
            delivered += c.delivered();
            redelivered += c.redelivered();
            acknowledged += c.acknowledged();
            publishedBytes += c.publishedBytes();
            deliveredBytes += c.deliveredBytes();
        }

        void write(Families f, String... labels) {
            f.gauge("rabbitmq_queue_messages_ready", "Messages ready to be delivered to consumers", ready, labels);
            f.gauge("rabbitmq_queue_messages_unacked", "Messages delivered to consumers but not yet acknowledged",
                unacked, labels);
            f.gauge("rabbitmq_queue_messages", "Sum of ready and unacknowledged messages - total queue depth",
                ready + unacked, labels);
            f.gauge("rabbitmq_queue_consumers", "Consumers on a queue", consumers, labels);
            f.counter("skiffmq_queue_messages_published", "Messages that entered a queue", published, labels);
            f.counter("skiffmq_queue_messages_delivered", "Messages a queue delivered, acknowledged or not",
                delivered, labels);
            f.counter("skiffmq_queue_messages_redelivered", "Messages a queue delivered again", redelivered,
                labels);
            f.counter("skiffmq_queue_messages_acknowledged", "Messages consumers of a queue acknowledged",
                acknowledged, labels);
            f.counter("skiffmq_queue_messages_published_bytes", "Bytes of the messages that entered a queue (as "
                + "stored: AMQP 1.0 bytes, or 0-9-1 properties and body)", publishedBytes, labels);
            f.counter("skiffmq_queue_messages_delivered_bytes", "Bytes of the messages a queue delivered",
                deliveredBytes, labels);
            if (streams > 0 || labels.length == 0) {
                // a counter in RabbitMQ, named without _total; a gauge here keeps the name (segments also go)
                f.gauge("rabbitmq_stream_segments", "Total number of stream segment files", segments, labels);
            }
        }
    }
}
