package io.skiffmq.server.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.skiffmq.cluster.NoMajorityException;
import io.skiffmq.cluster.QueueGroup;
import io.skiffmq.codec.amqp091.BasicProperties;
import io.skiffmq.core.message.Amqp091Message;
import io.skiffmq.core.message.Message;
import io.skiffmq.core.queue.ClassicQueue;
import io.skiffmq.core.queue.ForwardedConfirm;
import io.skiffmq.core.queue.PublishConfirm;
import io.skiffmq.core.queue.QueueContext;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.core.queue.QueueExecutor;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * A new leader's live queue and the publishes another node sends it again after losing its link to the old leader
 * (docs/quorum-queues.md, "Publishes between two leaders are held"): one the old leader committed is dropped and
 * confirmed; one it did not is enqueued; one this leader appended and has not committed yet is dropped and
 * confirmed when that commit comes, or refused when it fails. A first send is never dropped. A publish that is not
 * committed is refused as unavailable, never left unanswered; one that reaches a log no longer live goes to the
 * queue's hold for its next leader.
 */
class ResentPublishTest {
    private static final String GROUP = "g";
    private static final QueueCommands.Key KEY = new QueueCommands.Key("/", "qq", 7);
    private static final long NODE = 99;

    /** A group whose appends complete when the test says. */
    private static final class Group implements QueueGroup {
        final List<byte[]> appended = new ArrayList<>();
        final List<CompletableFuture<Void>> commits = new ArrayList<>();

        @Override
        public String name() {
            return GROUP;
        }

        @Override
        public List<String> members() {
            return List.of("a", "b", "c");
        }

        @Override
        public String leader() {
            return "a";
        }

        @Override
        public CompletableFuture<Void> append(long epoch, byte[] command) {
            appended.add(command);
            CompletableFuture<Void> commit = new CompletableFuture<>();
            commits.add(commit);
            return commit;
        }
    }

    /** How a publish was answered. */
    private static final class Answer implements PublishConfirm {
        String said = "nothing";

        @Override
        public void run() {
            said = "confirmed";
        }

        @Override
        public void refused() {
            said = "refused";
        }

        @Override
        public void unavailable(String queue) {
            said = "unavailable";
        }
    }

    private static Message message(String body) throws Exception {
        ByteBuf properties = Unpooled.buffer();
        new BasicProperties(null, null, null, 2, null, null, null, null, null, null, null, null, null, null)
            .encode(properties);
        return Amqp091Message.of(properties, Unpooled.wrappedBuffer(body.getBytes(StandardCharsets.UTF_8)), "",
            "qq");
    }

    private static Answer publish(ClassicQueue live, long number, boolean resent) throws Exception {
        Answer answer = new Answer();
        live.publish(message("m" + number), new ForwardedConfirm(answer, NODE, number, resent));
        return answer;
    }

    @Test
    void aResendIsDroppedExactlyWhenTheQueueHasIt() throws Exception {
        // the old leader committed the node's numbers 1 to 3, and 5 (4 went with it)
        ReplicatedQueues replicas = new ReplicatedQueues(Duration.ofSeconds(1));
        List<byte[]> committed = new ArrayList<>();
        for (long n : new long[] {1, 2, 3, 5}) {
            Message m = message("m" + n);
            committed.add(QueueCommands.enqueue(KEY, n, 0, 0, -1, m, NODE, n));
            m.release();
        }
        replicas.apply(GROUP, 1, ByteBuffer.wrap(QueueCommands.batch(committed)));
        QueueReplica replica = replicas.replica(GROUP, KEY);

        Group group = new Group();
        ClassicQueue live = new ClassicQueue(QueueDeclaration.of("qq", true, Map.of("x-queue-type", "quorum")),
            QueueExecutor.CALLER_THREAD, new ReplicatedQueueLog(group, KEY, 2, QueueExecutor.CALLER_THREAD,
                replica.enqueuers(), null, null, replica), Long.MAX_VALUE, QueueContext.DEFAULT);
        live.restore(replica.messages());
        live.recovered();
        assertThat(live.readyCount()).isEqualTo(4);

        assertThat(publish(live, 2, true).said).as("committed by the old leader").isEqualTo("confirmed");
        assertThat(publish(live, 5, true).said).isEqualTo("confirmed");
        assertThat(live.readyCount()).isEqualTo(4);
        assertThat(group.appended).isEmpty();

        Answer four = publish(live, 4, true);
        assertThat(live.readyCount()).as("lost with the old leader: taken").isEqualTo(5);
        assertThat(group.appended).hasSize(1);
        assertThat(group.appended.get(0)[4 + 0]).isEqualTo(QueueCommands.ENQUEUE_FORWARDED);

        Answer again = publish(live, 4, true);
        assertThat(live.readyCount()).as("appended here already").isEqualTo(5);
        assertThat(again.said).as("until that commits").isEqualTo("nothing");
        group.commits.get(0).complete(null);
        assertThat(four.said).isEqualTo("confirmed");
        assertThat(again.said).isEqualTo("confirmed");

        Answer six = publish(live, 6, false);
        Answer sixAgain = publish(live, 6, true);
        group.commits.get(1).completeExceptionally(new NoMajorityException("no majority", null));
        assertThat(six.said).as("never committed: refused, for its node to send it again").isEqualTo("unavailable");
        assertThat(sixAgain.said).as("its first copy failed").isEqualTo("unavailable");

        Answer first = publish(live, 3, false);
        assertThat(live.readyCount()).as("a first send is never dropped").isEqualTo(7);
        assertThat(first.said).isEqualTo("nothing");

        // deposed: what its last turn appended, and what comes after, is refused, never left unanswered
        ReplicatedQueueLog log = new ReplicatedQueueLog(group, KEY, 3, QueueExecutor.CALLER_THREAD,
            new Enqueuers(), null, null, null);
        Answer late = new Answer();
        log.retire();
        log.publish(8, message("late"), 0, -1, late);
        assertThat(late.said).as("no hold to take it").isEqualTo("unavailable");
        ClassicQueue hold = new ClassicQueue("held for the next leader", QueueExecutor.CALLER_THREAD);
        ReplicatedQueueLog holding = new ReplicatedQueueLog(group, KEY, 3, QueueExecutor.CALLER_THREAD,
            new Enqueuers(), hold, null, null);
        holding.retire();
        Message m = message("held");
        holding.publish(9, m, 0, -1, new Answer());
        m.release(); // the live queue's reference
        assertThat(hold.readyCount()).as("handed to the hold, with a reference of its own").isEqualTo(1);
        hold.close();
        live.close();
    }

    /** What a queue's hold was given back by a log whose leadership ended. */
    private static final class Numbering implements io.skiffmq.server.peer.PeerLinks.Unsent {
        final List<Long> taken = new ArrayList<>();
        final List<PublishConfirm> confirms = new ArrayList<>();
        long next;

        @Override
        public boolean take(Message message, PublishConfirm confirm, Runnable released, long number) {
            taken.add(number);
            confirms.add(confirm);
            message.release();
            return true;
        }

        @Override
        public long enqueuer() {
            return NODE;
        }

        @Override
        public long nextNumber() {
            return ++next;
        }
    }

    @Test
    void aPublishMadeOnADeposedLeaderGoesToTheNextWithItsNumber() throws Exception {
        Group group = new Group();
        Numbering numbering = new Numbering();
        ClassicQueue hold = new ClassicQueue("held for the next leader", QueueExecutor.CALLER_THREAD);
        ReplicatedQueueLog log = new ReplicatedQueueLog(group, KEY, 2, QueueExecutor.CALLER_THREAD, new Enqueuers(),
            hold, numbering, null);
        ClassicQueue live = new ClassicQueue(QueueDeclaration.of("qq", true, Map.of("x-queue-type", "quorum")),
            QueueExecutor.CALLER_THREAD, log, Long.MAX_VALUE, QueueContext.DEFAULT);
        Answer[] answers = new Answer[6];
        for (int i = 0; i < answers.length; i++) {
            answers[i] = new Answer();
            live.publish(message("m" + i), answers[i]);
        }
        assertThat(group.appended).hasSize(6).allSatisfy(entry ->
            assertThat(entry[4]).as("numbered, as a forwarded one").isEqualTo(QueueCommands.ENQUEUE_FORWARDED));

        group.commits.get(1).complete(null);
        assertThat(answers[1].said).as("answered in publishing order").isEqualTo("nothing");
        group.commits.get(0).complete(null);
        assertThat(answers[0].said).isEqualTo("confirmed");
        assertThat(answers[1].said).isEqualTo("confirmed");

        group.commits.get(2).completeExceptionally(new NoMajorityException("no majority in time", null));
        assertThat(answers[2].said).as("timed out: its outcome is this leader's to say").isEqualTo("unavailable");

        assertThat(log.leads()).isTrue();
        group.commits.get(3).completeExceptionally(new NoMajorityException("the epoch was over", null, true));
        assertThat(log.leads()).as("its hold waits for the next leader's queue, not this one").isFalse();
        assertThat(answers[3].said).as("deposed: sent to the next leader").isEqualTo("nothing");
        assertThat(numbering.taken).as("with the one after it, in order, under their numbers").containsExactly(4L, 5L,
            6L);
        assertThat(numbering.confirms).containsExactly(answers[3], answers[4], answers[5]);
        group.commits.get(4).complete(null);
        group.commits.get(5).completeExceptionally(new NoMajorityException("the epoch was over", null, true));
        assertThat(answers[4].said).as("the next leader answers it").isEqualTo("nothing");

        log.deposed();
        Answer late = new Answer();
        live.publish(message("late"), late);
        assertThat(hold.readyCount()).as("after its leadership ended: to the hold").isEqualTo(1);
        assertThat(numbering.taken).hasSize(3);
        hold.close();
        live.close();
    }
}
