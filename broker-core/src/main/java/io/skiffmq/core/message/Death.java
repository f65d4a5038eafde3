package io.skiffmq.core.message;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.qpid.proton.amqp.Symbol;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.UnsignedLong;

/**
 * One entry of a message's dead-letter history, as RabbitMQ 4 keeps it ({@code mc:record_death/3}): one per queue
 * and reason, counted, most recent first. Written into the message when it dies: as the {@code x-death} header
 * over AMQP 0-9-1 and the {@code x-opt-deaths} message annotation over AMQP 1.0, each in RabbitMQ's field names
 * and types, and read back from either when it dies again.
 *
 * @param reason {@code rejected}, {@code expired}, {@code maxlen} or {@code delivery_limit}
 * @param exchange the exchange the message had been published to before it died
 * @param routingKeys the routing keys it had been published with
 * @param ttl the message's own TTL when it died (milliseconds), -1 for none
 */
public record Death(String queue, String reason, long count, Instant firstTime, Instant lastTime, String exchange,
        List<String> routingKeys, long ttl) {

    /** The 0-9-1 header, and the AMQP 1.0 annotation, that hold the history. */
    public static final String X_DEATH = "x-death";
    public static final String X_OPT_DEATHS = "x-opt-deaths";
    /** Headers (0-9-1) and annotations (AMQP 1.0) naming the first and the latest death. */
    public static final List<String> FIRST_AND_LAST = List.of("x-first-death-reason", "x-first-death-queue",
        "x-first-death-exchange", "x-last-death-reason", "x-last-death-queue", "x-last-death-exchange");

    /** A message's routing keys as its death records them: its routing key (none when null), then its CC keys. */
    public static List<String> routingKeys(String routingKey, List<String> cc) {
        if (cc == null || cc.isEmpty()) {
            return routingKey == null ? List.of() : List.of(routingKey);
        }
        List<String> keys = new ArrayList<>(cc.size() + 1);
        if (routingKey != null) {
            keys.add(routingKey);
        }
        keys.addAll(cc);
        return List.copyOf(keys);
    }

    /** The history with one more death: counted on its (queue, reason) entry, which moves to the front. */
    public static List<Death> record(List<Death> history, String reason, String queue, Instant now, String exchange,
            List<String> routingKeys, long ttl) {
        List<Death> next = new ArrayList<>(history.size() + 1);
        Death same = null;
        for (Death d : history) {
            if (d.queue.equals(queue) && d.reason.equals(reason)) {
                same = d;
            } else {
                next.add(d);
            }
        }
        Death recorded = same != null
            ? new Death(queue, reason, same.count + 1, same.firstTime, now, same.exchange, same.routingKeys, same.ttl)
            : new Death(queue, reason, 1, now, now, exchange, routingKeys, ttl);
        next.add(0, recorded);
        return next;
    }

    /**
     * True when dead-lettering into {@code target} would close a cycle RabbitMQ drops ({@code mc:is_death_cycle}):
     * the message died in {@code target} before, and no death since (that one included) was a rejection, so no
     * client took part.
     */
    public static boolean isCycle(List<Death> history, String target) {
        for (Death d : history) {
            if (d.reason.equals("rejected")) {
                return false;
            }
            if (d.queue.equals(target)) {
                return true;
            }
        }
        return false;
    }

    /** The first and latest deaths' headers or annotations, given the history before and after this death. */
    public static Map<String, String> firstAndLast(Map<String, ?> existing, List<Death> history) {
        Map<String, String> values = new LinkedHashMap<>();
        Death last = history.get(0);
        Object firstReason = existing.get("x-first-death-reason");
        if (firstReason != null) {
            values.put("x-first-death-reason", firstReason.toString());
            values.put("x-first-death-queue", String.valueOf(existing.get("x-first-death-queue")));
            values.put("x-first-death-exchange", String.valueOf(existing.get("x-first-death-exchange")));
        } else {
            Death first = history.size() == 1 ? last : history.get(history.size() - 1);
            values.put("x-first-death-reason", first.reason);
            values.put("x-first-death-queue", first.queue);
            values.put("x-first-death-exchange", first.exchange);
        }
        values.put("x-last-death-reason", last.reason);
        values.put("x-last-death-queue", last.queue);
        values.put("x-last-death-exchange", last.exchange);
        return values;
    }

    // ---- AMQP 0-9-1: the x-death header ------------------------------------------------------------------

    /**
     * The history a 0-9-1 {@code x-death} header written by the broker holds (neutral values), or an empty list:
     * only for a message stored before the history was kept beside it ({@link Message#readStored}); a publisher's
     * header is no history. Tables without every field the broker writes are left out, as RabbitMQ 3.13 leaves them
     * out when it reads the header ({@code mc_amqpl:recover_deaths/2}), rather than given a count or a time.
     */
    public static List<Death> fromAmqp091(Map<String, Object> headers) {
        Object value = headers == null ? null : headers.get(X_DEATH);
        if (!(value instanceof List<?> tables)) {
            return List.of();
        }
        List<Death> history = new ArrayList<>(tables.size());
        for (Object t : tables) {
            if (t instanceof Map<?, ?> table && table.get("time") instanceof Instant time
                    && table.get("count") instanceof Number count && table.get("queue") != null
                    && table.get("reason") != null && table.get("exchange") != null
                    && table.get("routing-keys") instanceof List<?> keys) {
                long ttl = -1;
                if (table.get("original-expiration") != null) {
                    ttl = Amqp091Message.ttl(table.get("original-expiration").toString());
                }
                history.add(new Death(table.get("queue").toString(), table.get("reason").toString(),
                    count.longValue(), time, time, table.get("exchange").toString(), strings(keys), ttl));
            }
        }
        return history;
    }

    /** The {@code x-death} header's value: a list of tables, most recent first, as RabbitMQ writes them. */
    public static List<Object> toAmqp091(List<Death> history) {
        List<Object> tables = new ArrayList<>(history.size());
        for (Death d : history) {
            Map<String, Object> table = new LinkedHashMap<>();
            if (d.ttl >= 0) {
                table.put("original-expiration", Long.toString(d.ttl));
            }
            table.put("count", d.count);
            table.put("reason", d.reason);
            table.put("queue", d.queue);
            table.put("time", Instant.ofEpochSecond(d.firstTime.getEpochSecond())); // 0-9-1 timestamps are seconds
            table.put("exchange", d.exchange);
            table.put("routing-keys", List.copyOf(d.routingKeys));
            tables.add(table);
        }
        return tables;
    }

    // ---- AMQP 1.0: the x-opt-deaths annotation ------------------------------------------------------------

    /** The history in an {@code x-opt-deaths} annotation value (as proton-j decodes it), or an empty list. */
    public static List<Death> fromAmqp10(Object value) {
        Object[] maps = value instanceof Object[] a ? a : value instanceof List<?> l ? l.toArray() : null;
        if (maps == null) {
            return List.of();
        }
        List<Death> history = new ArrayList<>(maps.length);
        for (Object m : maps) {
            if (m instanceof Map<?, ?> map) {
                history.add(new Death(string(map.get(Symbol.valueOf("queue"))),
                    string(map.get(Symbol.valueOf("reason"))),
                    map.get(Symbol.valueOf("count")) instanceof Number n ? n.longValue() : 1,
                    instant(map.get(Symbol.valueOf("first-time"))), instant(map.get(Symbol.valueOf("last-time"))),
                    string(map.get(Symbol.valueOf("exchange"))), strings(map.get(Symbol.valueOf("routing-keys"))),
                    map.get(Symbol.valueOf("ttl")) instanceof Number t ? t.longValue() : -1));
            }
        }
        return history;
    }

    /**
     * The {@code x-opt-deaths} annotation's value for proton-j to encode: an array of maps keyed by symbols, in
     * RabbitMQ 4's order and types ({@code mc_amqp:encode_deaths/1}).
     */
    @SuppressWarnings("rawtypes")
    public static Map[] toAmqp10(List<Death> history) {
        Map[] maps = new Map[history.size()];
        for (int i = 0; i < maps.length; i++) {
            Death d = history.get(i);
            Map<Symbol, Object> map = new LinkedHashMap<>();
            if (d.ttl >= 0) {
                map.put(Symbol.valueOf("ttl"), UnsignedInteger.valueOf(d.ttl));
            }
            map.put(Symbol.valueOf("queue"), d.queue);
            map.put(Symbol.valueOf("reason"), Symbol.valueOf(d.reason));
            map.put(Symbol.valueOf("count"), UnsignedLong.valueOf(d.count));
            map.put(Symbol.valueOf("first-time"), new Date(d.firstTime.toEpochMilli()));
            map.put(Symbol.valueOf("last-time"), new Date(d.lastTime.toEpochMilli()));
            map.put(Symbol.valueOf("exchange"), d.exchange);
            map.put(Symbol.valueOf("routing-keys"), d.routingKeys.toArray(new String[0]));
            maps[i] = map;
        }
        return maps;
    }

    private static String string(Object value) {
        return value == null ? "" : value.toString();
    }

    private static Instant instant(Object value) {
        return value instanceof Date date ? date.toInstant() : value instanceof Instant i ? i : Instant.EPOCH;
    }

    private static List<String> strings(Object value) {
        Object[] items = value instanceof Object[] a ? a : value instanceof List<?> l ? l.toArray() : new Object[0];
        List<String> out = new ArrayList<>(items.length);
        for (Object item : items) {
            if (item != null) { // a void routing key is none
                out.add(item.toString());
            }
        }
        return List.copyOf(out);
    }
}
