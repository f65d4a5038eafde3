package io.skiffmq.core.stream;

import io.skiffmq.core.queue.PublishConfirm;
import java.util.Arrays;

/**
 * The confirms a stream owes its publishers, in offset order, each run once the offset of its message is committed:
 * a ring of (offset, confirm) pairs in two arrays, so a publish allocates nothing here.
 *
 * <p>Owned by the stream queue's thread; not thread-safe.
 */
final class PendingConfirms {
    private long[] offsets = new long[256];
    private PublishConfirm[] confirms = new PublishConfirm[256];
    private int head;
    private int size;

    void add(long offset, PublishConfirm confirm) {
        if (size == offsets.length) {
            grow();
        }
        int slot = (head + size) % offsets.length;
        offsets[slot] = offset;
        confirms[slot] = confirm;
        size++;
    }

    boolean isEmpty() {
        return size == 0;
    }

    /** Runs the confirms of every message up to {@code committed}. */
    void confirmThrough(long committed) {
        while (size > 0 && offsets[head] <= committed) {
            PublishConfirm confirm = take();
            confirm.run();
        }
    }

    /** Tells every confirm still owed that its message was refused (the log failed). */
    void refuseAll() {
        while (size > 0) {
            take().refused();
        }
    }

    /** Runs every confirm still owed (the stream was deleted: nothing is left to keep safe). */
    void confirmAll() {
        while (size > 0) {
            take().run();
        }
    }

    /** Forgets every confirm still owed (the broker is stopping: they are neither sent nor refused). */
    void clear() {
        Arrays.fill(confirms, null);
        size = 0;
        head = 0;
    }

    private PublishConfirm take() {
        PublishConfirm confirm = confirms[head];
        confirms[head] = null;
        head = (head + 1) % offsets.length;
        size--;
        return confirm;
    }

    private void grow() {
        long[] o = new long[offsets.length * 2];
        PublishConfirm[] c = new PublishConfirm[o.length];
        for (int i = 0; i < size; i++) {
            o[i] = offsets[(head + i) % offsets.length];
            c[i] = confirms[(head + i) % offsets.length];
        }
        offsets = o;
        confirms = c;
        head = 0;
    }
}
