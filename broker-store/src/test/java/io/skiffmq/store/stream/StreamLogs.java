package io.skiffmq.store.stream;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import net.openhft.chronicle.queue.ExcerptTailer;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueue;
import net.openhft.chronicle.queue.impl.single.SingleChronicleQueueBuilder;
import net.openhft.chronicle.wire.DocumentContext;

/** Helpers of the stream log tests: writing messages, and reading chunks back through the log and around it. */
final class StreamLogs {
    private StreamLogs() {
    }

    /** A 12-byte body naming its offset, so a test sees which message it got. */
    static String body(long offset) {
        return String.format("m%011d", offset);
    }

    static ByteBuf bytes(String text) {
        return Unpooled.copiedBuffer(text, StandardCharsets.UTF_8);
    }

    /** Writes one chunk of {@code count} messages named after their offsets; returns its chunk id. */
    static long writeChunk(StreamLog log, int count) {
        ChunkBuilder builder = log.chunkBuilder();
        long first = log.nextOffset();
        for (int i = 0; i < count; i++) {
            ByteBuf body = bytes(body(first + i));
            try {
                if (builder.addMessage(body, null, null, 0) != ChunkBuilder.ADDED) {
                    throw new AssertionError("chunk full");
                }
            } finally {
                body.release();
            }
        }
        return builder.commit();
    }

    /** Every chunk the reader gives now, as a consumer receives it (header and data), decoded by the tests. */
    static List<DecodedChunk> drain(StreamReader reader) {
        List<DecodedChunk> chunks = new ArrayList<>();
        for (StreamChunk chunk; (chunk = reader.next()) != null; ) {
            ByteBuf out = Unpooled.buffer(chunk.deliveredLength());
            try {
                chunk.writeHeaderAndData(out);
                chunks.add(DecodedChunk.delivered(ByteBufUtil.getBytes(out)));
            } finally {
                out.release();
            }
        }
        return chunks;
    }

    /**
     * Every chunk on disk, tracking ones too, read with Chronicle's own tailer from each segment directory, oldest
     * first, and decoded by the tests (CRC checked): the log's index and mappings play no part.
     */
    static List<DecodedChunk> onDisk(Path directory) throws IOException {
        List<DecodedChunk> chunks = new ArrayList<>();
        for (Path segment : segmentDirectories(directory)) {
            try (SingleChronicleQueue queue = SingleChronicleQueueBuilder.binary(segment).build();
                 ExcerptTailer tailer = queue.createTailer()) {
                while (true) {
                    try (DocumentContext document = tailer.readingDocument()) {
                        if (!document.isPresent()) {
                            break;
                        }
                        chunks.add(DecodedChunk.stored(document.wire().bytes().toByteArray()));
                    }
                }
            }
        }
        return chunks;
    }

    static List<Path> segmentDirectories(Path directory) throws IOException {
        try (Stream<Path> files = Files.list(directory)) {
            return files.filter(p -> p.getFileName().toString().startsWith("segment-")).sorted().toList();
        }
    }

    /** The user chunks' messages in order, checking the chunk ids are dense (each the previous id + records). */
    static List<String> denseMessages(List<DecodedChunk> chunks, long firstOffset) {
        List<String> messages = new ArrayList<>();
        long next = firstOffset;
        for (DecodedChunk chunk : chunks) {
            if (chunk.type() != 0) {
                if (chunk.records() != 0 || chunk.chunkId() != next) {
                    throw new AssertionError("tracking chunk " + chunk.chunkId() + " of " + chunk.records()
                        + " records where offset " + next + " is next");
                }
                continue;
            }
            if (chunk.chunkId() != next) {
                throw new AssertionError("chunk " + chunk.chunkId() + " where offset " + next + " is next");
            }
            messages.addAll(chunk.texts());
            next += chunk.records();
        }
        return messages;
    }
}
