package io.skiffmq.server.stream;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Single active consumer groups (RabbitMQ's {@code rabbit_stream_sac_coordinator}): subscriptions with
 * {@code single-active-consumer=true} that share a {@code name} on one stream form a group, across connections, of
 * which one at a time is active and receives messages.
 *
 * <ul>
 *   <li>On a plain stream the first subscriber is active; when it leaves, the next in order of subscription.</li>
 *   <li>On a partition of a super stream (subscribed with {@code super-stream}), the active one is the member at
 *       the partition's index modulo the group's size, so a group spreads the partitions over its members. When a
 *       member comes or goes and another should be active, the active one <em>steps down</em> first: it is told it
 *       is inactive, and only once it has answered (so it could store its offset) or left is the new one
 *       activated.</li>
 * </ul>
 *
 * A member hears of it through its connection ({@link StreamConnectionHandler#groupChanged}), which sends the
 * client a {@code consumer_update}; the newly active consumer's answer says where it starts reading.
 *
 * <p>Thread-safe: connections on every loop register and leave; each call holds the groups' lock briefly and hands
 * the news to the members' loops.
 */
final class ConsumerGroups {
    /** A group: the stream and the consumers' name, in a virtual host. */
    private record Key(String vhost, String stream, String name) {
    }

    /** One subscription in a group. Its fields are guarded by the groups' lock. */
    static final class Member {
        final StreamConnectionHandler connection;
        final int subscriptionId;
        private final Key key;
        private final int partitionIndex;
        private boolean active;

        private Member(StreamConnectionHandler connection, int subscriptionId, Key key, int partitionIndex) {
            this.connection = connection;
            this.subscriptionId = subscriptionId;
            this.key = key;
            this.partitionIndex = partitionIndex;
        }

        String name() {
            return key.name();
        }
    }

    private static final class Group {
        final List<Member> members = new ArrayList<>();
        /** The member told to step down, whose answer the next active one waits for; null when none. */
        Member steppingDown;
    }

    private final Map<Key, Group> groups = new HashMap<>();

    /**
     * Adds a subscription to its group; the member (and, if that changes, the one that was active) hears whether
     * it is active.
     *
     * @param partitionIndex the stream's index in its super stream, or -1
     */
    synchronized Member join(String vhost, String stream, String name, int partitionIndex,
            StreamConnectionHandler connection, int subscriptionId) {
        Key key = new Key(vhost, stream, name);
        Group group = groups.computeIfAbsent(key, k -> new Group());
        Member member = new Member(connection, subscriptionId, key, partitionIndex);
        group.members.add(member);
        settle(group);
        return member;
    }

    /** The subscription left (unsubscribed, its stream or its connection gone); another may become active. */
    synchronized void leave(Member member) {
        Group group = groups.get(member.key);
        if (group == null || !group.members.remove(member)) {
            return;
        }
        member.active = false;
        if (group.steppingDown == member) {
            group.steppingDown = null;
        }
        if (group.members.isEmpty()) {
            groups.remove(member.key);
            return;
        }
        settle(group);
    }

    /** The member told to step down answered: the one that should be active now is. */
    synchronized void steppedDown(Member member) {
        Group group = groups.get(member.key);
        if (group != null && group.steppingDown == member) {
            group.steppingDown = null;
            settle(group);
        }
    }

    /** Whether {@code member} is its group's active one now. */
    synchronized boolean isActive(Member member) {
        return member.active;
    }

    /** The members of the groups on {@code stream} in {@code vhost}, group by group in order of subscription. */
    synchronized List<GroupMember> members(String vhost, String stream) {
        List<GroupMember> out = new ArrayList<>();
        groups.forEach((key, group) -> {
            if (key.vhost().equals(vhost) && key.stream().equals(stream)) {
                for (Member m : group.members) {
                    out.add(new GroupMember(key.name(), m.subscriptionId, m.connection.name(), m.active));
                }
            }
        });
        return out;
    }

    /** Makes the member that should be active so, stepping the current one down first where needed. */
    private void settle(Group group) {
        if (group.steppingDown != null) {
            return; // its answer comes first
        }
        Member target = target(group);
        Member current = null;
        for (Member m : group.members) {
            if (m.active) {
                current = m;
            }
        }
        if (current == target) {
            return;
        }
        if (current != null) {
            current.active = false;
            group.steppingDown = current;
            current.connection.groupChanged(current, false, true);
            return;
        }
        target.active = true;
        target.connection.groupChanged(target, true, false);
    }

    /** The member that should be active: the first on a plain stream, the partition's share on a super stream. */
    private static Member target(Group group) {
        Member first = group.members.get(0);
        if (first.partitionIndex < 0) {
            for (Member m : group.members) {
                if (m.active) {
                    return m; // stays active while it is there
                }
            }
            return first;
        }
        return group.members.get(first.partitionIndex % group.members.size());
    }
}
