package io.skiffmq.server.amqp10;

import org.apache.qpid.proton.amqp.Symbol;

/**
 * Which JMS topic subscription a consumer link names, and the queue that holds its messages. JMS identifies a
 * subscription by its name and the connection's client-id; Qpid JMS sends the client-id as the container-id and the
 * subscription name as the link name. A shared subscription's links carry the source capability {@code shared}, and
 * {@code global} when the connection has no client-id: the subscription is then the name alone, across connections.
 *
 * <p>Qpid JMS refuses {@code |} in subscription names and gives each link of a shared subscription its own name
 * from the subscription's: {@code sub}, {@code sub|2}, … (durable, with a client-id), {@code sub|global},
 * {@code sub|global2}, … (durable, global), {@code sub|volatile1}, … and {@code sub|global-volatile1}, … (not
 * durable). The subscription is what comes before the first {@code |}. Links without {@code shared} are named by the
 * whole link name, as before shared subscriptions.
 *
 * <p>Queues, one per subscription, so that every link of one shares its messages:
 * <table>
 * <caption>subscription queue names</caption>
 * <tr><th>subscription</th><th>queue</th></tr>
 * <tr><td>durable (shared or not), client-id</td><td>{@code jms-subscription:<client-id>:<name>}</td></tr>
 * <tr><td>durable shared, global</td><td>{@code jms-subscription-global:<name>}</td></tr>
 * <tr><td>non-durable shared, client-id</td><td>{@code jms-shared-subscription:<client-id>:<name>}</td></tr>
 * <tr><td>non-durable shared, global</td><td>{@code jms-shared-subscription-global:<name>}</td></tr>
 * </table>
 * A durable subscription is one name space in JMS, shared or not: both kinds map to one queue, and an unsubscribe
 * (which does not say which kind it removes) finds either.
 *
 * @param name the JMS subscription name
 * @param clientId the container-id it belongs to; null for a global subscription
 * @param durable survives its consumers and restarts
 * @param shared may have several consumers
 */
record SubscriptionName(String name, String clientId, boolean durable, boolean shared) {
    static final String SHARED = "shared";
    static final String GLOBAL = "global";
    /** Between the subscription name and what Qpid JMS adds to make each link's name unique. */
    private static final char DELIMITER = '|';

    /** The subscription a durable or shared topic link attaches to. */
    static SubscriptionName of(String containerId, String linkName, Symbol[] sourceCapabilities, boolean durable) {
        boolean shared = IncomingLink.hasCapability(sourceCapabilities, SHARED);
        if (!shared) {
            return new SubscriptionName(linkName, containerId, durable, false);
        }
        boolean global = IncomingLink.hasCapability(sourceCapabilities, GLOBAL);
        return new SubscriptionName(beforeDelimiter(linkName), global ? null : containerId, durable, true);
    }

    /**
     * The durable subscription that Qpid JMS's unsubscribe names: an attach with no source, named by the
     * subscription's first link name, with the desired capabilities {@code shared} and {@code global} when the
     * connection has no client-id ({@code sub|global}).
     */
    static SubscriptionName unsubscribing(String containerId, String linkName, Symbol[] desiredCapabilities) {
        if (IncomingLink.hasCapability(desiredCapabilities, GLOBAL)) {
            return new SubscriptionName(beforeDelimiter(linkName), null, true, true);
        }
        return new SubscriptionName(linkName, containerId, true, false);
    }

    private static String beforeDelimiter(String linkName) {
        int delimiter = linkName.indexOf(DELIMITER);
        return delimiter < 0 ? linkName : linkName.substring(0, delimiter);
    }

    boolean global() {
        return clientId == null;
    }

    /** The queue that holds the subscription's messages. */
    String queue() {
        String prefix = durable ? "jms-subscription" : "jms-shared-subscription";
        return global() ? prefix + "-global:" + name : prefix + ":" + clientId + ":" + name;
    }
}
