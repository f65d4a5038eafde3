package io.skiffmq.server.stream;

import io.netty.buffer.ByteBuf;
import io.skiffmq.codec.stream.CommandKey;
import io.skiffmq.codec.stream.PublishFrame;
import io.skiffmq.codec.stream.PublishFrameWriter;
import io.skiffmq.codec.stream.PublisherCommand;
import io.skiffmq.codec.stream.PublisherCommand.DeclarePublisher;
import io.skiffmq.codec.stream.PublisherCommand.DeletePublisher;
import io.skiffmq.codec.stream.PublisherCommand.QueryPublisherSequence;
import io.skiffmq.codec.stream.Response;
import io.skiffmq.codec.stream.ResponseCode;
import io.skiffmq.codec.stream.StreamDecodeException;
import io.skiffmq.core.stream.StreamQueue;
import io.skiffmq.server.authz.Permission;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A connection's publishers (ids 0 to 255, the protocol's uint8): declaring and deleting them, their publishes
 * ({@link PublishBatch}) and the answers (confirms once committed, through the stream's {@link ConfirmQueue};
 * errors at once), and the sequence of a named producer. As RabbitMQ's reader: a declaration needs write
 * permission on the stream, and the id and the (stream, reference) pair free on the connection; during a resource
 * alarm it is refused (0x11); a publish for an unknown publisher is answered with an error per message (0x12).
 * Owned by the connection's event loop.
 */
final class Publishers {
    private final StreamConnectionHandler connection;
    private final StreamPublisher[] byId = new StreamPublisher[256];
    /** Written on the loop only; volatile for the metrics, which read it from their thread. */
    private volatile int count;

    Publishers(StreamConnectionHandler connection) {
        this.connection = connection;
    }

    int count() {
        return count;
    }

    /** What listings show of each publisher ({@link StreamActivity}). */
    List<StreamActivity.Publisher> snapshot() {
        List<StreamActivity.Publisher> list = new ArrayList<>(count);
        for (StreamPublisher p : all()) {
            list.add(new StreamActivity.Publisher(p.id(), p.stream(), p.reference() == null ? "" : p.reference(),
                p.publishedCount(), p.confirmedCount(), p.erroredCount()));
        }
        return list;
    }

    List<StreamPublisher> all() {
        List<StreamPublisher> all = new ArrayList<>(count);
        for (StreamPublisher p : byId) {
            if (p != null) {
                all.add(p);
            }
        }
        return all;
    }

    void declare(DeclarePublisher declare) {
        long corr = declare.correlationId();
        String stream = declare.stream();
        String reference = declare.reference() == null || declare.reference().isEmpty() ? null
            : declare.reference();
        if (connection.flow().alarmed()) {
            connection.respond(new Response(CommandKey.DECLARE_PUBLISHER, corr, ResponseCode.PRECONDITION_FAILED));
            return;
        }
        ResponseCode refused = connection.permission(Permission.WRITE, stream);
        if (refused == null && reference != null
                && reference.getBytes(StandardCharsets.UTF_8).length > PublisherCommand.MAX_REFERENCE_LENGTH) {
            refused = ResponseCode.PRECONDITION_FAILED;
        }
        if (refused == null && (byId[declare.publisherId()] != null || referenceTaken(stream, reference))) {
            refused = ResponseCode.PRECONDITION_FAILED;
        }
        StreamQueue queue = refused == null ? connection.stream(stream) : null;
        if (refused == null && queue == null) {
            refused = ResponseCode.STREAM_DOES_NOT_EXIST;
        }
        if (refused != null) {
            connection.respond(new Response(CommandKey.DECLARE_PUBLISHER, corr, refused));
            return;
        }
        StreamUse use = connection.uses().use(stream, queue);
        StreamPublisher publisher = new StreamPublisher(declare.publisherId(), reference, use);
        byId[publisher.id()] = publisher;
        count++;
        use.publisherAdded();
        if (reference == null) {
            connection.respond(new Response(CommandKey.DECLARE_PUBLISHER, corr, ResponseCode.OK));
            return;
        }
        // the log's record of the reference is made on its writer's thread, before any of its publishes get there
        connection.onStream(queue, () -> {
            if (!queue.writable()) {
                return false;
            }
            publisher.tracked = use.log().publisher(reference);
            return true;
        }, ok -> {
            if (ok) {
                connection.respond(new Response(CommandKey.DECLARE_PUBLISHER, corr, ResponseCode.OK));
            } else {
                remove(publisher);
                connection.respond(new Response(CommandKey.DECLARE_PUBLISHER, corr,
                    ResponseCode.STREAM_DOES_NOT_EXIST));
            }
        });
    }

    private boolean referenceTaken(String stream, String reference) {
        if (reference == null) {
            return false;
        }
        for (StreamPublisher p : byId) {
            if (p != null && reference.equals(p.reference()) && stream.equals(p.stream())) {
                return true;
            }
        }
        return false;
    }

    void delete(DeletePublisher delete) {
        StreamPublisher publisher = byId[delete.publisherId()];
        if (publisher == null) {
            connection.respond(new Response(CommandKey.DELETE_PUBLISHER, delete.correlationId(),
                ResponseCode.PUBLISHER_DOES_NOT_EXIST));
            return;
        }
        remove(publisher);
        connection.respond(new Response(CommandKey.DELETE_PUBLISHER, delete.correlationId(), ResponseCode.OK));
    }

    /** Forgets a publisher; its confirms in flight are dropped. */
    void remove(StreamPublisher publisher) {
        if (byId[publisher.id()] != publisher) {
            return;
        }
        byId[publisher.id()] = null;
        count--;
        publisher.delete();
        publisher.use().publisherRemoved();
        connection.uses().releaseIfUnused(publisher.use());
    }

    /** Forgets the publishers of {@code use}'s stream (deleted); true when there were any. */
    boolean removeAll(StreamUse use) {
        boolean any = false;
        for (StreamPublisher p : byId) {
            if (p != null && p.use() == use) {
                remove(p);
                any = true;
            }
        }
        return any;
    }

    /**
     * A publish frame: to its stream's thread, or answered here with an error per message when its publisher does
     * not exist. The caller releases the frame; the batch retains it while it travels.
     */
    void publish(ByteBuf frame) throws StreamDecodeException {
        PublishBatch batch = connection.batch();
        PublishFrame view;
        try {
            view = batch.wrap(frame);
        } catch (StreamDecodeException e) {
            connection.recycle(batch);
            throw e;
        }
        StreamPublisher publisher = byId[view.publisherId()];
        int messages = view.count();
        if (publisher == null) {
            connection.recycle(batch);
            int start = PublishFrameWriter.beginError(connection.output().buffer(), view.publisherId());
            while (view.next()) {
                PublishFrameWriter.addError(connection.output().buffer(), view.publishingId(),
                    ResponseCode.PUBLISHER_DOES_NOT_EXIST);
            }
            PublishFrameWriter.endError(connection.output().buffer(), start);
            connection.output().appended();
            return;
        }
        publisher.published(messages);
        connection.counters().receivedConfirmed(messages);
        connection.flow().sent(messages);
        batch.send(publisher, connection.settings().maxSubEntryBatchBytes());
    }

    /**
     * A batch came back from its stream: errors are answered now, the rest waits in the stream's confirms (and what
     * is committed already is confirmed). A deleted publisher's answers are dropped.
     */
    void published(PublishBatch batch) {
        StreamPublisher publisher = batch.publisher();
        int count = batch.count();
        if (publisher.deleted()) {
            connection.flow().answered(count);
            return;
        }
        int errors = 0;
        int start = -1;
        ByteBuf out = null;
        StreamUse use = publisher.use();
        for (int i = 0; i < count; i++) {
            long offset = batch.offset(i);
            if (offset != PublishBatch.ERROR) {
                use.confirms().add(publisher, batch.publishingId(i), offset);
                continue;
            }
            if (start < 0) {
                out = connection.output().buffer();
                start = PublishFrameWriter.beginError(out, publisher.id());
            }
            PublishFrameWriter.addError(out, batch.publishingId(i), batch.code(i));
            connection.errors().add(batch.code(i));
            errors++;
        }
        if (start >= 0) {
            PublishFrameWriter.endError(out, start);
            connection.output().appended();
            publisher.errored(errors);
            connection.flow().answered(errors);
        }
        use.confirmCommitted();
        connection.flushLater();
    }

    void querySequence(QueryPublisherSequence query) {
        long corr = query.correlationId();
        ResponseCode refused = connection.permission(Permission.READ, query.stream());
        StreamQueue queue = refused == null ? connection.stream(query.stream()) : null;
        if (refused == null && queue == null) {
            refused = ResponseCode.STREAM_DOES_NOT_EXIST;
        }
        if (refused != null) {
            connection.respond(new PublisherCommand.QueryPublisherSequenceResponse(corr, refused, 0));
            return;
        }
        String reference = query.reference();
        // on the writer's thread, after this connection's publishes before it
        connection.onStream(queue, () -> reference == null || reference.isEmpty() ? 0L
                : ((io.skiffmq.store.stream.StreamLogStore) queue.store()).log().publisherSequence(reference),
            sequence -> connection.respond(new PublisherCommand.QueryPublisherSequenceResponse(corr,
                ResponseCode.OK, sequence)));
    }

    /** The connection ends: every publisher goes. */
    void clear() {
        for (StreamPublisher p : byId) {
            if (p != null) {
                p.delete();
            }
        }
        java.util.Arrays.fill(byId, null);
        count = 0;
    }
}
