package io.skiffmq.benchmarks;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.concurrent.ScheduledFuture;
import io.skiffmq.codec.amqp10.AmqpFrame;
import io.skiffmq.codec.amqp10.DispositionPerformative;
import io.skiffmq.codec.amqp10.FlowPerformative;
import io.skiffmq.codec.amqp10.PerformativeCode;
import io.skiffmq.codec.amqp10.PerformativeCodec;
import io.skiffmq.codec.amqp10.TransferPerformative;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.Begin;
import org.apache.qpid.proton.amqp.transport.Role;

/**
 * The sending link of the lean engine: publishes unsettled (the broker's {@code accepted} disposition is the
 * confirm), at most {@code maxInFlight} unconfirmed, or pre-settled; within the link credit and the session window
 * the broker grants. It sends in batches: as much as those limits and the socket's writability allow each time a
 * read batch ends (confirms and credit came back) or the socket drains, then one flush. Paced, it sends what is due
 * once per millisecond, each body stamped with the time it was due, so a late sender shows as latency, not as a
 * lower rate.
 *
 * <p>Messages: a {@code header} section (durable or not) and one {@code data} section ({@link LoadBody}); one
 * frame each while they fit the broker's frame size, split with {@code more} when not.
 *
 * <p>Owned by the channel's event loop; {@link #start} and {@link #done} may be used from any thread.
 */
final class LeanSender extends LeanConnection {
    /** How often a paced sender sends what is due: latency gains at most this from pacing. */
    private static final long PACE_TICK_NANOS = TimeUnit.MILLISECONDS.toNanos(1);
    /** Upper bound of a transfer performative and frame header here (handle, id, 4-byte tag, format, settled). */
    private static final int TRANSFER_OVERHEAD = 64;
    /** The frame header and transfer {@link #writeTransferHeader} writes. */
    static final int TRANSFER_FRAME_HEADER = 28;

    /**
     * How a sender publishes.
     *
     * @param settled pre-settled: counted as sent once written, no confirm
     * @param count messages to send, 0 for no limit
     * @param rate messages per second, 0 for as fast as the limits allow
     */
    record Publishing(boolean durable, boolean settled, int bodySize, int maxInFlight, long count, long rate) {
    }

    private final int id;
    private final boolean presettled;
    private final int bodySize;
    private final int maxInFlight;
    private final long count;
    /** Messages per second when paced, 0 when not. */
    private final long rate;
    private final byte[] messagePrefix;
    /** The delivery tag of a message split over frames, which the codec's transfer reads from a buffer. */
    private final ByteBuf tag = Unpooled.buffer(4, 4);
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private boolean started;
    /** The schedule when paced, else null. */
    private Pace pace;
    private long measureFrom;
    private boolean measuring;
    private long end;
    /** Runs {@link #send} every {@link #PACE_TICK_NANOS} when paced. */
    private ScheduledFuture<?> paceTimer;
    /** Deliveries sent (the next delivery-id and delivery-count) and settled by the broker. */
    private long deliveries;
    private long settled;
    /** Where the link credit and the session window end, as delivery count and transfer id. */
    private long creditLimit;
    private long windowLimit;
    private long nextOutgoingId;

    /** @param id this sender's id in the bodies, below {@link LoadBody#MAX_SENDERS} */
    LeanSender(LoadCounters counters, String name, Endpoint endpoint, int id, Publishing publishing) {
        super(counters, name, endpoint);
        this.id = id;
        this.presettled = publishing.settled();
        this.bodySize = publishing.bodySize();
        this.maxInFlight = publishing.maxInFlight();
        this.count = publishing.count();
        this.rate = publishing.rate();
        this.messagePrefix = messagePrefix(publishing.durable(), bodySize);
    }

    /** The bytes before the body: the header section, then the data section's descriptor and size. */
    static byte[] messagePrefix(boolean durable, int bodySize) {
        // header: list8 of size 2 holding 1 field, durable (true 0x41, false 0x42); then data: vbin8 or vbin32
        byte[] header = {0x00, 0x53, 0x70, (byte) 0xc0, 0x02, 0x01, (byte) (durable ? 0x41 : 0x42)};
        byte[] data = bodySize < 256 ? new byte[] {0x00, 0x53, 0x75, (byte) 0xa0, (byte) bodySize}
            : new byte[] {0x00, 0x53, 0x75, (byte) 0xb0, (byte) (bodySize >>> 24), (byte) (bodySize >>> 16),
                (byte) (bodySize >>> 8), (byte) bodySize};
        byte[] prefix = java.util.Arrays.copyOf(header, header.length + data.length);
        System.arraycopy(data, 0, prefix, header.length, data.length);
        return prefix;
    }

    @Override
    Attach attach() {
        return attach(name() + "-link", Role.SENDER, new org.apache.qpid.proton.amqp.messaging.Source(),
            target(endpoint.address(), endpoint.topic()));
    }

    @Override
    void onBegin(Begin begin) {
        windowLimit = begin.getIncomingWindow().longValue();
    }

    @Override
    void onAttached(Attach reply) {
        markReady();
    }

    /**
     * Starts sending, until {@code end} ({@link System#nanoTime()}) or {@code count} messages; any thread. Paced,
     * what it fell behind before {@code measureFrom} (a broker still compiling) is forgiven then, so the measured
     * latency is not the warm-up's backlog; behind later, it catches up, and that shows as latency.
     */
    void start(long measureFrom, long end) {
        ctx.executor().execute(() -> {
            this.measureFrom = measureFrom;
            this.end = end;
            started = true;
            if (rate > 0) {
                pace = new Pace(rate, System.nanoTime());
                paceTimer = ctx.executor().scheduleAtFixedRate(this::send, PACE_TICK_NANOS, PACE_TICK_NANOS,
                    TimeUnit.NANOSECONDS);
            }
            if (end != Long.MAX_VALUE) {
                // the end is noticed even when nothing comes back: a broker that grants no more credit (a memory
                // alarm) or has settled, rejected, every delivery sent, so that no frame calls send() again
                ctx.executor().schedule(this::send, Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
            }
            send();
        });
    }

    /** Completes once this sender has sent all it will and each of its messages is confirmed or refused. */
    CompletableFuture<Void> done() {
        return done;
    }

    @Override
    void onFlow(FlowPerformative flow) {
        if (flow.nextIncomingId() >= 0 || flow.incomingWindow() >= 0) {
            windowLimit = Math.max(0, flow.nextIncomingId()) + Math.max(0, flow.incomingWindow());
        }
        if (flow.handle() == 0 && flow.linkCredit() >= 0) {
            // [2.6.7] the receiver's delivery-count may be absent before it has seen ours: then it is our initial 0
            creditLimit = Math.max(0, flow.deliveryCount()) + flow.linkCredit();
        }
    }

    @Override
    void onTransfer(TransferPerformative transfer, ByteBuf buf, int payload, int end, long now) {
        fail("a transfer on a sending link");
    }

    @Override
    void onDisposition(DispositionPerformative disposition) {
        if (!disposition.receiverRole()) {
            return;
        }
        long first = disposition.first();
        long last = disposition.last() < 0 ? first : disposition.last();
        long settling = last - first + 1;
        if (disposition.stateCode() == PerformativeCode.ACCEPTED) {
            counters.sent.addAndGet(settling);
        } else if (counters.errors.getAndAdd(settling) < REPORTED_ERRORS) {
            System.err.println(name + ": the broker settled deliveries " + first + ".." + last
                + " with outcome code " + disposition.stateCode() + ", not accepted");
        }
        settled += settling;
    }

    @Override
    void onReadBatchEnd() {
        send();
    }

    @Override
    public void channelWritabilityChanged(io.netty.channel.ChannelHandlerContext ctx) throws Exception {
        if (ctx.channel().isWritable()) {
            send();
        }
        super.channelWritabilityChanged(ctx);
    }

    @Override
    void onFailed() {
        stopPacing();
        done.complete(null);
    }

    /** Sends what the limits allow now, then flushes once. */
    private void send() {
        if (!started || done.isDone()) {
            return;
        }
        long now = System.nanoTime();
        boolean finished = now >= end || count > 0 && deliveries >= count;
        if (!finished) {
            if (!measuring && now >= measureFrom) {
                measuring = true;
                if (pace != null) {
                    pace.forgive(now, deliveries);
                }
            }
            long due = pace != null ? pace.due(now) : Long.MAX_VALUE;
            if (count > 0) {
                due = Math.min(due, count);
            }
            boolean sent = false;
            while (deliveries < due && deliveries < creditLimit && deliveries - settled < maxInFlight
                    && nextOutgoingId < windowLimit && ctx.channel().isWritable()) {
                transfer(pace != null ? pace.dueAt(deliveries) : System.nanoTime());
                sent = true;
            }
            if (sent) {
                flush();
            }
            finished = count > 0 && deliveries >= count;
        }
        if (finished) {
            stopPacing();
            if (settled == deliveries) {
                done.complete(null);
            }
        }
    }

    private void stopPacing() {
        if (paceTimer != null) {
            paceTimer.cancel(false);
            paceTimer = null;
        }
    }

    private void transfer(long sentAt) {
        int bodyId = LoadBody.id(id, deliveries);
        int messageSize = messagePrefix.length + bodySize;
        if (TRANSFER_FRAME_HEADER + messageSize <= remoteMaxFrameSize) {
            ByteBuf out = output(TRANSFER_FRAME_HEADER + messageSize);
            writeTransferHeader(out, (int) deliveries, messageSize, presettled);
            out.writeBytes(messagePrefix);
            LoadBody.write(out, sentAt, bodyId, bodySize);
            nextOutgoingId++;
        } else {
            ByteBuf message = Unpooled.buffer(messageSize);
            message.writeBytes(messagePrefix);
            LoadBody.write(message, sentAt, bodyId, bodySize);
            tag.setInt(0, (int) deliveries);
            TransferPerformative transfer = codec().transfer().handle(0).deliveryId(deliveries)
                .deliveryTag(tag, 0, 4).messageFormat(0).settled(presettled);
            int room = remoteMaxFrameSize - TRANSFER_OVERHEAD;
            while (message.isReadable()) {
                int chunk = Math.min(message.readableBytes(), room);
                transfer.more(chunk < message.readableBytes());
                PerformativeCodec.writeFrame(output(TRANSFER_OVERHEAD + chunk), AmqpFrame.TYPE_AMQP, 0, transfer,
                    chunk);
                output(chunk).writeBytes(message, chunk);
                nextOutgoingId++;
                // continuation frames [2.7.5]: the handle and more, nothing else
                transfer = codec().transfer().handle(0);
            }
            message.release();
        }
        deliveries++;
        if (presettled) {
            settled++;
            counters.sent.incrementAndGet();
        }
    }

    /**
     * Writes the frame header and the {@code transfer} of a one-frame message of {@code messageSize} bytes, by
     * hand: one fixed shape, cheaper than the codec's field by field encoding (it is the sender's whole per-message
     * cost besides the body). The codec decodes it as {@code transfer(handle 0, delivery-id, delivery-tag = the
     * 4-byte id, message-format 0, settled)}.
     *
     * <pre>
     * size | doff 2, type 0, channel 0 | 00 53 14 | list8 c0 size 15 count 5 |
     *     uint0 43 | uint 70 id(4) | vbin8 a0 04 id(4) | uint0 43 | true 41 or false 42
     * </pre>
     */
    static void writeTransferHeader(ByteBuf out, int deliveryId, int messageSize, boolean settled) {
        out.writeInt(TRANSFER_FRAME_HEADER + messageSize);
        out.writeInt(0x0200_0000);
        out.writeMedium(0x00_53_14);
        out.writeMedium(0xc0_0f_05);
        out.writeShort(0x43_70);
        out.writeInt(deliveryId);
        out.writeShort(0xa0_04);
        out.writeInt(deliveryId);
        out.writeShort(settled ? 0x43_41 : 0x43_42);
    }
}
