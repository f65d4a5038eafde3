package io.skiffmq.cluster;

import java.util.ArrayList;
import java.util.List;

/**
 * A cluster member as the {@code cluster-nodes} setting names it: {@code name@host:port}, where {@code name@host}
 * is the node's name (RabbitMQ's {@code rabbit@host}) and {@code port} its {@code cluster-port}. The node is
 * reached at {@code host:port}. Immutable.
 *
 * @param name the node name, {@code name@host}
 * @param host the host part of the name, where the node is reached
 * @param port the node's cluster port
 */
public record NodeAddress(String name, String host, int port) {
    public NodeAddress {
        int at = name.indexOf('@');
        if (at <= 0 || at == name.length() - 1 || name.indexOf('@', at + 1) >= 0) {
            throw new IllegalArgumentException("a node name is name@host, got " + name);
        }
        if (host.isEmpty()) {
            throw new IllegalArgumentException("a node needs a host: " + name);
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("a node's cluster port must be in [1, 65535]: " + name + ":" + port);
        }
    }

    /**
     * Reads {@code name@host:port}.
     *
     * @throws IllegalArgumentException when it is not of that form
     */
    public static NodeAddress parse(String text) {
        String s = text.trim();
        int colon = s.lastIndexOf(':');
        if (colon < 0) {
            throw new IllegalArgumentException("a cluster node is name@host:port, got " + text);
        }
        String name = s.substring(0, colon);
        int port;
        try {
            port = Integer.parseInt(s.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("a cluster node is name@host:port, got " + text);
        }
        return new NodeAddress(name, hostOf(name), port);
    }

    /** Reads a comma-separated list of {@code name@host:port}; blank reads as none. */
    public static List<NodeAddress> parseList(String text) {
        List<NodeAddress> nodes = new ArrayList<>();
        for (String part : text.split(",")) {
            if (!part.isBlank()) {
                NodeAddress node = parse(part);
                if (nodes.stream().anyMatch(n -> n.name.equals(node.name))) {
                    throw new IllegalArgumentException("cluster node " + node.name + " is listed twice");
                }
                nodes.add(node);
            }
        }
        return List.copyOf(nodes);
    }

    /** The host of {@code name@host}. */
    public static String hostOf(String nodeName) {
        return nodeName.substring(nodeName.indexOf('@') + 1);
    }

    /** {@code host:port}, what the transport dials. */
    public String socketAddress() {
        return host + ":" + port;
    }

    @Override
    public String toString() {
        return name + ":" + port;
    }
}
