package io.skiffmq.core.queue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufUtil;
import io.netty.buffer.Unpooled;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.message.MessageFormat;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;

/**
 * Page files kept as byte arrays, so a paged message really leaves the heap's object graph of the queue: what is
 * read back is a new message made from its stored form, as the store's page files do. Counts what the tests look at.
 */
final class MemoryPages implements QueuePages {
    /** One paged message as written. */
    private record Page(long sequence, byte[] bytes, long deliveryCount, boolean acquiredBefore, long location,
            long expiresAt, int bodySize, MessageFormat format, boolean durable, String exchange, String routingKey) {
        Message message() {
            try {
                return Message.readStored(format, Unpooled.wrappedBuffer(bytes), durable, exchange, routingKey);
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        }

        Page at(long newLocation) {
            return new Page(sequence, bytes, deliveryCount, acquiredBefore, newLocation, expiresAt, bodySize, format,
                durable, exchange, routingKey);
        }
    }

    final Map<Integer, File> lanes = new HashMap<>();
    boolean deleted;

    /** Messages held in every lane's file. */
    int held() {
        return lanes.values().stream().mapToInt(f -> f.pages.size()).sum();
    }

    @Override
    public PageFile lane(int lane) {
        File file = new File();
        lanes.put(lane, file);
        return file;
    }

    @Override
    public void delete() {
        deleted = true;
    }

    final class File implements PageFile {
        final ArrayDeque<Page> pages = new ArrayDeque<>();
        int reads;
        int appends;
        boolean failReads;

        @Override
        public void append(long sequence, Message message, long deliveryCount, boolean acquiredBefore,
                long location, long expiresAt, int bodySize) {
            appends++;
            // its stored form, as the store's page files keep it
            ByteBuf stored = Unpooled.buffer(message.storedSize());
            message.writeStored(stored);
            pages.addLast(new Page(sequence, ByteBufUtil.getBytes(stored), deliveryCount, acquiredBefore, location,
                expiresAt, bodySize, message.format(), message.durable(), message.exchange(), message.routingKey()));
        }

        @Override
        public PagedMessage read() {
            if (failReads) {
                throw new java.io.UncheckedIOException(new java.io.IOException("disk gone"));
            }
            Page page = pages.pollFirst();
            if (page == null) {
                return null;
            }
            reads++;
            return new PagedMessage(page.sequence(), page.message(), page.deliveryCount(), page.acquiredBefore(),
                page.location(), page.expiresAt(), page.bodySize());
        }

        @Override
        public int relocate(long before, QueueLog log) {
            int copied = 0;
            ArrayDeque<Page> moved = new ArrayDeque<>();
            for (Page page : pages) {
                if (page.location() >= 0 && page.location() < before) {
                    Message message = page.message();
                    long location = log.relocate(page.sequence(), message, page.deliveryCount(), page.expiresAt(),
                        page.location());
                    message.release();
                    page = page.at(location);
                    copied++;
                }
                moved.addLast(page);
            }
            pages.clear();
            pages.addAll(moved);
            return copied;
        }

        @Override
        public void clear(Removed removed) {
            if (removed != null) {
                for (Page page : pages) {
                    if (page.location() >= 0) {
                        removed.removed(page.sequence(), page.location());
                    }
                }
            }
            pages.clear();
        }

        @Override
        public void delete() {
            pages.clear();
        }
    }
}
