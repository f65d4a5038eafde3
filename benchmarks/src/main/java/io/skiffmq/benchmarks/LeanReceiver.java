package io.skiffmq.benchmarks;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.skiffmq.codec.amqp10.AmqpDecodeException;
import io.skiffmq.codec.amqp10.AmqpFrame;
import io.skiffmq.codec.amqp10.DispositionPerformative;
import io.skiffmq.codec.amqp10.FlowPerformative;
import io.skiffmq.codec.amqp10.PerformativeCodec;
import io.skiffmq.codec.amqp10.SectionCode;
import io.skiffmq.codec.amqp10.TransferPerformative;
import io.skiffmq.codec.amqp10.TypeReader;
import org.apache.qpid.proton.amqp.messaging.Accepted;
import org.apache.qpid.proton.amqp.transport.Attach;
import org.apache.qpid.proton.amqp.transport.Role;

/**
 * The receiving link of the lean engine: grants {@code credit} and tops it up once half is used, checks every
 * message's body ({@link LoadBody}: length, padding, per-sender order), records its latency, and accepts what it
 * received whole as one {@code disposition(first, last, settled, accepted)} per read batch (the delivery-ids of one
 * link are consecutive). The body is read in place in the socket buffer, found by walking the section
 * descriptors; a message in several frames is joined first.
 *
 * <p>Owned by the channel's event loop.
 */
final class LeanReceiver extends LeanConnection {
    private static final short SMALL_DESCRIPTOR = 0x0053;
    private static final int VBIN8 = 0xa0;
    private static final int VBIN32 = 0xb0;

    private final int credit;
    private final int bodySize;
    private final LoadBody.Order order;
    /** Whole deliveries received (the link's delivery-count) and where the credit granted ends. */
    private long deliveries;
    private long creditLimit;
    private long nextIncomingId;
    /** The delivery-id of the delivery whose frames are arriving, and whether one of them settled it. */
    private long deliveryId;
    private boolean settled;
    /** Delivery-ids received whole and not yet accepted: first, last; -1 when none. */
    private long firstUnsettled = -1;
    private long lastUnsettled;
    /** The frames so far of a message that spans several, else null. */
    private ByteBuf partial;
    /** Checked deliveries since the last read batch ended, and when the last arrived: to the counters per batch. */
    private long received;
    private long lastReceipt;

    /** @param consecutive true when this receiver gets every message of its queue (see {@link LoadBody.Order}) */
    LeanReceiver(LoadCounters counters, String name, Endpoint endpoint, int credit, int bodySize,
            boolean consecutive) {
        super(counters, name, endpoint);
        this.credit = credit;
        this.bodySize = bodySize;
        this.order = new LoadBody.Order(consecutive);
    }

    @Override
    Attach attach() {
        return attach(name() + "-link", Role.RECEIVER, source(endpoint.address(), endpoint.topic()),
            new org.apache.qpid.proton.amqp.messaging.Target());
    }

    @Override
    void onAttached(Attach reply) {
        grant();
        flush();
        markReady();
    }

    @Override
    void onTransfer(TransferPerformative transfer, ByteBuf buf, int payload, int end, long now) {
        nextIncomingId++;
        if (transfer.deliveryId() >= 0) {
            deliveryId = transfer.deliveryId(); // on the first frame of a delivery; the others may leave it out
        }
        settled |= transfer.settled();
        if (!transfer.more()) {
            // accepted only once whole: Artemis's large-message writer fails on a delivery settled mid-transfer
            // and sends what it had so far as the whole message
            if (!settled) {
                if (firstUnsettled < 0) {
                    firstUnsettled = deliveryId;
                }
                lastUnsettled = deliveryId;
            }
            settled = false;
        }
        if (transfer.more() || partial != null) {
            if (partial == null) {
                partial = Unpooled.buffer();
            }
            partial.writeBytes(buf, payload, end - payload);
            if (transfer.more()) {
                return;
            }
            try {
                message(partial, partial.readerIndex(), partial.writerIndex(), now);
            } finally {
                partial.release();
                partial = null;
            }
        } else {
            message(buf, payload, end, now);
        }
        deliveries++;
    }

    /** Checks and counts the message in {@code [index, end)} of {@code buf}. */
    private void message(ByteBuf buf, int index, int end, long now) {
        long data = dataSection(buf, index, end);
        int start = (int) (data >>> 32);
        long id = data < 0 ? -1 : LoadBody.check(buf, start, (int) data, bodySize);
        if (id < 0 || !order.accept((int) id)) {
            if (counters.errors.getAndIncrement() < REPORTED_ERRORS) {
                System.err.println(name + ": " + (id < 0 ? "a body of the wrong length or padding"
                    : "sender " + LoadBody.sender((int) id) + "'s sequence " + LoadBody.sequence((int) id)
                    + " out of order"));
            }
            return;
        }
        counters.latencies.recordValue(Math.max(0, now - LoadBody.sentAt(buf, start)) / 1000);
        received++;
        lastReceipt = now;
    }

    /**
     * Finds the first {@code data} section of the message in {@code [index, end)} of {@code buf} by walking the
     * section descriptors, without decoding the other sections.
     *
     * @return where its bytes start (high 32 bits) and how many there are (low 32 bits); -1 when it has none or
     *         is malformed
     */
    static long dataSection(ByteBuf buf, int index, int end) {
        try {
            while (index < end) {
                if (end - index > 4 && buf.getShort(index) == SMALL_DESCRIPTOR
                        && buf.getUnsignedByte(index + 2) == SectionCode.DATA) {
                    int code = buf.getUnsignedByte(index + 3);
                    if (code != VBIN8 && code != VBIN32) {
                        return -1;
                    }
                    int start = index + (code == VBIN8 ? 5 : 8);
                    int length = TypeReader.valueEnd(buf, index + 3, end) - start;
                    return (long) start << 32 | length;
                }
                index = TypeReader.valueEnd(buf, index, end);
            }
        } catch (AmqpDecodeException e) {
            return -1;
        }
        return -1;
    }

    @Override
    void onFlow(FlowPerformative flow) {
        if (flow.echo()) {
            grant();
        }
    }

    @Override
    void onDisposition(DispositionPerformative disposition) {
        // the broker settles nothing it sends us: we settle by accepting
    }

    @Override
    void onReadBatchEnd() {
        if (received > 0) {
            counters.received.addAndGet(received);
            counters.lastReceipt.set(lastReceipt);
            received = 0;
        }
        if (firstUnsettled >= 0) {
            DispositionPerformative accept = codec().disposition().receiverRole(true).first(firstUnsettled)
                .last(lastUnsettled).settled(true).state(Accepted.getInstance());
            PerformativeCodec.writeFrame(output(32), AmqpFrame.TYPE_AMQP, 0, accept, 0);
            firstUnsettled = -1;
        }
        if (creditLimit - deliveries <= credit / 2) {
            grant();
        }
    }

    /** Writes a flow that brings the credit back to {@code credit}. */
    private void grant() {
        creditLimit = deliveries + credit;
        FlowPerformative flow = codec().flow().nextIncomingId(nextIncomingId).incomingWindow(WINDOW)
            .nextOutgoingId(0).outgoingWindow(WINDOW).handle(0).deliveryCount(deliveries).linkCredit(credit);
        PerformativeCodec.writeFrame(output(48), AmqpFrame.TYPE_AMQP, 0, flow, 0);
    }

    @Override
    void onFailed() {
        if (partial != null) {
            partial.release();
            partial = null;
        }
    }
}
