package io.skiffmq.server.amqp10;

import io.skiffmq.core.BrokerException;
import io.skiffmq.core.Exchange;
import io.skiffmq.core.MetadataTimeouts;
import io.skiffmq.core.VirtualHost;
import io.skiffmq.core.queue.Queue;
import io.skiffmq.core.queue.QueueDeclaration;
import io.skiffmq.core.routing.Binding;
import io.skiffmq.core.routing.Destination;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Supplier;
import io.skiffmq.server.authz.Access;
import io.skiffmq.server.authz.Permission;
import org.apache.qpid.proton.amqp.UnsignedInteger;
import org.apache.qpid.proton.amqp.UnsignedLong;

/**
 * RabbitMQ 4's HTTP-over-AMQP management API, as the RabbitMQ AMQP 1.0 clients use it: queues, exchanges and
 * bindings, by method and path, with maps as bodies and HTTP status codes as answers (200, 201, 204, 400, 403,
 * 404, 409), each where RabbitMQ gives it. Names in paths are percent-encoded. A permission refused is no status:
 * the request fails with a session error ({@link LinkPermits#refused}), which ends the requesting session, as
 * RabbitMQ 4 answers it.
 *
 * <p>Stateless apart from the virtual host; safe from any thread. Answers that need a queue's own thread (purge,
 * delete) complete later.
 */
public final class ManagementNode {
    private static final System.Logger LOG = System.getLogger(ManagementNode.class.getName());

    /** An answer: the HTTP status and the body (a map, a list, or null). */
    record Response(int status, Object body) {
        static Response of(int status, Object body) {
            return new Response(status, body);
        }

        static Response error(int status, String message) {
            return new Response(status, message);
        }
    }

    private final VirtualHost vhost;
    private final String node;
    /** The connection the requests come from: the owner of the exclusive queues they declare. */
    private final Object owner;
    private final Executor executor;
    /** Each request's permission checks (a fresh {@link Access}: requests run on several threads); null: none. */
    private final Supplier<Access> permits;
    /** The requests come from another node of the cluster, which may ask for every queue's counts. */
    private final boolean fromNode;

    /** A node whose requests run on the calling thread, for a connection of its own, unrestricted. */
    ManagementNode(VirtualHost vhost, String node) {
        this(vhost, node, new Object(), Runnable::run, null, false);
    }

    /**
     * @param owner the requesting connection, owner of the exclusive queues it declares
     * @param executor runs each request: durable changes wait for the disk there, so never an event loop
     * @param fromNode another node's connection (docs/cluster.md, "Messages between nodes")
     */
    ManagementNode(VirtualHost vhost, String node, Object owner, Executor executor, Supplier<Access> permits,
            boolean fromNode) {
        this.permits = permits;
        this.fromNode = fromNode;
        this.vhost = vhost;
        this.node = node;
        this.owner = owner;
        this.executor = executor;
    }

    CompletableFuture<Response> handle(String method, String path, Object body) {
        return CompletableFuture.supplyAsync(() -> answer(method, path, body), executor).thenCompose(f -> f);
    }

    private CompletableFuture<Response> answer(String method, String path, Object body) {
        try {
            return route(method == null ? "" : method, path == null ? "" : path, body)
                .exceptionally(e -> e.getCause() instanceof BrokerException b ? refusal(b) : error(e));
        } catch (BrokerException e) {
            return CompletableFuture.completedFuture(refusal(e));
        } catch (IllegalArgumentException | ClassCastException e) {
            return CompletableFuture.completedFuture(Response.error(400, "bad request: " + e.getMessage()));
        }
    }

    /**
     * RabbitMQ's status for each refusal, as its {@code rabbit_amqp_management} answers: precondition_failed is
     * 409, and any other AMQP error there (another connection's exclusive queue: resource_locked) is 400.
     */
    private static Response refusal(BrokerException e) {
        return Response.error(switch (e.kind()) {
            case NOT_FOUND -> 404;
            case PRECONDITION_FAILED, RESOURCE_LIMIT -> 409; // RabbitMQ's queue limit is a precondition_failed
            case ACCESS_REFUSED -> 403;
            case RESOURCE_LOCKED, INVALID -> 400;
            case NOT_IMPLEMENTED -> 501;
            case TIMEOUT -> 503; // as RabbitMQ's HTTP API answers a Khepri timeout
        }, e.getMessage());
    }

    private static Response error(Throwable e) {
        LOG.log(System.Logger.Level.ERROR, "management request failed", e);
        return Response.error(500, "internal error: " + e.getMessage());
    }

    private CompletableFuture<Response> route(String method, String path, Object body) {
        int query = path.indexOf('?');
        String[] parts = (query < 0 ? path : path.substring(0, query)).substring(path.startsWith("/") ? 1 : 0)
            .split("/", -1);
        String resource = parts[0];
        if (fromNode && resource.equals("queues") && parts.length == 1 && method.equals("GET")) {
            return done(Response.of(200, queueCounts()));
        }
        if (resource.equals("queues") && parts.length == 2) {
            String name = Address.decode(parts[1]);
            return switch (method) {
                case "PUT" -> declareQueue(name, map(body, QUEUE_FIELDS));
                case "GET" -> {
                    requireAny(Access.Resource.QUEUE, name);
                    yield queueInfo(name);
                }
                case "DELETE" -> deleteQueue(name, false);
                default -> done(Response.error(405, method + " " + path));
            };
        }
        if (resource.equals("queues") && parts.length == 3 && parts[2].equals("messages") && method.equals("DELETE")) {
            String name = Address.decode(parts[1]);
            require(Permission.READ, Access.Resource.QUEUE, name);
            return purge(name, false);
        }
        if (resource.equals("exchanges") && parts.length == 2) {
            String name = Address.decode(parts[1]);
            return switch (method) {
                case "PUT" -> done(declareExchange(name, map(body, EXCHANGE_FIELDS)));
                case "DELETE" -> deleteExchange(name, false);
                default -> done(Response.error(405, method + " " + path));
            };
        }
        if (resource.equals("bindings")) {
            if (method.equals("POST") && parts.length == 1) {
                Binding binding = binding(map(body, BINDING_FIELDS));
                requireBinding(binding);
                vhost.bind(binding);
                return done(Response.of(204, null));
            }
            if (method.equals("GET") && parts.length == 1) {
                return done(Response.of(200, listBindings(query < 0 ? Map.of() : queryParameters(path.substring(query + 1)))));
            }
            if (method.equals("DELETE") && parts.length == 2) {
                return deleteBinding(parts[1], false);
            }
        }
        return done(Response.error(404, "no management resource " + method + " " + path));
    }

    /**
     * RabbitMQ's checks, in the order its {@code rabbit_amqp_management} makes them (after a request's own checks
     * of names and the default exchange, except a new exchange's name): a refusal ends the session with
     * {@code amqp:unauthorized-access}
     * ({@link LinkPermits#refused}), where the request's own errors are answered with a status.
     */
    private void require(Permission permission, Access.Resource resource, String name) {
        if (permits != null) {
            LinkPermits.refuseIf(permits.get().refusal(permission, resource, name));
        }
    }

    /**
     * Any of the three permissions, as RabbitMQ 4.3 checks a queue's {@code GET} (its 0-9-1 passive declare's
     * check): read, write, then configure, and the last refusal is the one given.
     */
    private void requireAny(Access.Resource resource, String name) {
        if (permits != null && permits.get().refusal(Permission.READ, resource, name) != null
                && permits.get().refusal(Permission.WRITE, resource, name) != null) {
            require(Permission.CONFIGURE, resource, name);
        }
    }

    /**
     * Binding and unbinding: neither end the default exchange (403) nor a name with a line break (400), then write
     * on the destination, read on the source and its topic permission (a queue's binding or an exchange's), whether
     * or not the binding exists.
     */
    private void requireBinding(Binding binding) {
        Destination d = binding.destination();
        if (binding.source().isEmpty() || d.isExchange() && d.name().isEmpty()) {
            throw new BrokerException(BrokerException.Kind.ACCESS_REFUSED, DEFAULT_EXCHANGE_REFUSED);
        }
        String bad = lineBreak(binding.source()) != null ? lineBreak(binding.source()) : lineBreak(d.name());
        if (bad != null) {
            throw new BrokerException(BrokerException.Kind.INVALID, bad);
        }
        require(Permission.WRITE, d.isExchange() ? Access.Resource.EXCHANGE : Access.Resource.QUEUE, d.name());
        require(Permission.READ, Access.Resource.EXCHANGE, binding.source());
        if (permits != null) {
            LinkPermits.refuseIf(LinkPermits.topicRefusal(permits.get(), vhost, Permission.READ, binding.source(),
                binding.key()));
        }
    }

    private static final String DEFAULT_EXCHANGE_REFUSED = "operation not permitted on the default exchange";

    /** A name RabbitMQ refuses (400), or null. */
    private static Response badName(String name) {
        String bad = lineBreak(name);
        return bad == null ? null : Response.error(400, bad);
    }

    /** RabbitMQ's text for a name holding a line break, or null. */
    private static String lineBreak(String name) {
        return name.indexOf('\n') >= 0 || name.indexOf('\r') >= 0 ? "Bad name '" + name
            + "': line feed and carriage return characters not allowed" : null;
    }

    /** RabbitMQ's 403 for a name with the reserved prefix {@code amq.}, or null. */
    private Response reserved(String kind, String name) {
        return name.startsWith("amq.") ? Response.error(403, RoutingErrors.resource(kind, name, vhost.name())
            + " starts with reserved prefix 'amq.'") : null;
    }

    private static CompletableFuture<Response> done(Response response) {
        return CompletableFuture.completedFuture(response);
    }

    /** The fields a body may hold, as RabbitMQ decodes them: any other is a bad request. */
    private static final Set<String> QUEUE_FIELDS = Set.of("durable", "exclusive", "auto_delete", "arguments");
    private static final Set<String> EXCHANGE_FIELDS = Set.of("type", "durable", "auto_delete", "internal", "arguments");
    private static final Set<String> BINDING_FIELDS = Set.of("source", "destination_queue", "destination_exchange",
        "binding_key", "arguments");

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object body, Set<String> fields) {
        if (body == null) {
            return Map.of();
        }
        if (!(body instanceof Map<?, ?>)) {
            throw new IllegalArgumentException("expected a map body");
        }
        for (Object field : ((Map<?, ?>) body).keySet()) {
            if (!fields.contains(String.valueOf(field))) {
                throw new IllegalArgumentException("unknown field '" + field + "'");
            }
        }
        return (Map<String, Object>) body;
    }

    private static boolean flag(Map<String, Object> body, String name, boolean otherwise) {
        Object value = body.get(name);
        return value == null ? otherwise : (Boolean) value;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> arguments(Map<String, Object> body) {
        Object args = body.get("arguments");
        return args == null ? Map.of() : (Map<String, Object>) args;
    }

    // ---- queues -------------------------------------------------------------------------------------------

    private CompletableFuture<Response> declareQueue(String name, Map<String, Object> body) {
        // as RabbitMQ checks a queue name before anything else
        if (name.isEmpty()) {
            return done(Response.error(400, "declare queue with empty name not allowed"));
        }
        Response refused = badName(name);
        if (refused == null) {
            refused = reserved("queue", name);
        }
        if (refused != null) {
            return done(refused);
        }
        require(Permission.CONFIGURE, Access.Resource.QUEUE, name);
        // the arguments are checked by the virtual host, as for every protocol
        Map<String, Object> arguments = arguments(body);
        boolean existed = vhost.queue(name) != null || vhost.remoteQueue(name) != null;
        if (!existed && arguments.get("x-dead-letter-exchange") instanceof String dlx) {
            // as RabbitMQ checks a new queue's dead-letter exchange: read on the queue, write on the exchange
            require(Permission.READ, Access.Resource.QUEUE, name);
            require(Permission.WRITE, Access.Resource.EXCHANGE, dlx);
        }
        QueueDeclaration wanted = vhost.withDefaultType(new QueueDeclaration(name, flag(body, "durable", true),
            flag(body, "exclusive", false), flag(body, "auto_delete", false), arguments));
        io.skiffmq.core.definitions.DefinitionChange.QueueHomed remote =
            vhost.queue(name) == null ? vhost.remoteQueue(name) : null;
        if (remote == null) {
            vhost.declareQueue(wanted, owner);
        } else if (!remote.declaration().equivalent(wanted)) {
            // declared again from a node that is not its home: checked against its record, as over 0-9-1
            throw new BrokerException(BrokerException.Kind.PRECONDITION_FAILED, "queue '" + name + "' exists as "
                + remote.declaration().describe());
        }
        return queueInfo(name).thenApply(info -> Response.of(existed ? 200 : 201, info.body()));
    }

    private Queue existingQueue(String name) {
        Queue queue = vhost.queue(name);
        if (queue == null) {
            throw new BrokerException(BrokerException.Kind.NOT_FOUND, "no queue '" + name + "'");
        }
        return queue;
    }

    /**
     * A queue's info, as {@code rabbit_amqp_management} gives it; of a queue served by another node (homed there, or
     * a replicated queue it leads), with the counts that node holds, asked there.
     */
    private CompletableFuture<Response> queueInfo(String name) {
        return queueInfo(name, false);
    }

    /** @param waited whether a replicated queue's leader was waited for already */
    private CompletableFuture<Response> queueInfo(String name, boolean waited) {
        Queue queue = vhost.queue(name);
        if (queue == null) {
            queue = vhost.remoteQueueProxy(name);
            if (queue == null) {
                if (!waited && vhost.remoteQueue(name) != null) {
                    return led(name).thenComposeAsync(done -> queueInfo(name, true), executor);
                }
                existingQueue(name); // 404
            }
            Queue remote = queue;
            return remote.counts().thenApply(counts -> queueInfo(name, remote, counts.ready(), counts.consumers()));
        }
        return done(queueInfo(name, queue, queue.readyCount(), queue.consumerCount()));
    }

    /** @param waited whether a replicated queue's leader was waited for already */
    private CompletableFuture<Response> purge(String name, boolean waited) {
        Queue remote = vhost.queue(name) == null ? vhost.remoteQueueProxy(name) : null;
        if (remote != null) {
            return remote.purge().thenApply(n -> count(200, n)); // by its home node (docs/cluster.md)
        }
        if (!waited && vhost.queue(name) == null && vhost.remoteQueue(name) != null) {
            return led(name).thenComposeAsync(done -> purge(name, true), executor);
        }
        Queue queue = existingQueue(name);
        vhost.checkAccess(queue, owner);
        if (queue.type() == io.skiffmq.core.queue.QueueType.STREAM) {
            // rabbit_amqp_management's words for a queue type that cannot be purged
            return done(Response.error(400, "purge not supported by queue '" + queue.name() + "' in vhost '"
                + vhost.name() + "'"));
        }
        return queue.purge().thenApply(n -> count(200, n));
    }

    /**
     * Once a replicated quorum queue that neither lives nor has a stand-in here has a leader serving it: it is
     * between two leaders, or just declared and not live at its leader yet (whose own {@code /management} is then
     * asked). At once for any other queue.
     */
    private CompletableFuture<Void> led(String name) {
        return vhost.led(name, "timed out waiting for a leader of quorum queue '" + name + "' in vhost '"
            + vhost.name() + "'");
    }

    private Response queueInfo(String name, Queue queue, int ready, int consumers) {
        List<String> nodes = vhost.queueNodes(name);
        if (nodes == null || nodes.isEmpty()) {
            nodes = List.of(node);
        }
        Map<String, Object> info = new LinkedHashMap<>();
        info.put("name", name);
        info.put("durable", queue.durable());
        info.put("auto_delete", queue.declaration().autoDelete());
        info.put("exclusive", queue.declaration().exclusive());
        info.put("type", queue.type().alias());
        info.put("arguments", queue.arguments());
        info.put("leader", nodes.get(0));
        info.put("replicas", nodes.toArray(String[]::new));
        info.put("message_count", UnsignedLong.valueOf(ready));
        info.put("consumer_count", UnsignedInteger.valueOf(consumers));
        return Response.of(200, info);
    }

    /**
     * The counts of every queue homed on this node in the virtual host, for another node's HTTP listings (not
     * RabbitMQ's: its nodes read each other's queue metrics over Erlang distribution). Read off the queues' threads,
     * approximate as a listing's are.
     */
    private List<Map<String, Object>> queueCounts() {
        List<Map<String, Object>> counts = new ArrayList<>();
        for (Queue queue : vhost.queues()) {
            int ready = queue.readyCount();
            int unacked = queue.unackedCount();
            counts.add(Map.of("name", queue.name(), "messages", UnsignedLong.valueOf(ready + unacked),
                "messages_ready", UnsignedLong.valueOf(ready), "messages_unacknowledged", UnsignedLong.valueOf(unacked),
                "consumers", UnsignedInteger.valueOf(queue.consumerCount())));
        }
        return counts;
    }

    /** @param caughtUp whether this node has applied what the cluster committed when the delete arrived */
    private CompletableFuture<Response> deleteQueue(String name, boolean caughtUp) {
        Response bad = badName(name);
        if (bad != null) {
            return done(bad);
        }
        require(Permission.CONFIGURE, Access.Resource.QUEUE, name);
        Queue queue = vhost.queue(name);
        if (queue == null) {
            CompletableFuture<Integer> remote = vhost.deleteRemoteQueue(name); // by its home node, with its messages
            if (remote != null) {
                return remote.thenApply(n -> count(200, n));
            }
            if (!caughtUp && vhost.clustered()) {
                // declared on another node and not applied here yet? Look again once it would be
                return vhost.caughtUp(MetadataTimeouts.QUEUE_DELETE)
                    .thenComposeAsync(done -> deleteQueue(name, true), executor);
            }
            // RabbitMQ answers a delete of a missing queue with 200 and no messages
            return done(count(200, 0));
        }
        vhost.checkAccess(queue, owner);
        CompletableFuture<Integer> deleted = vhost.deleteQueue(queue);
        return deleted == null ? done(count(200, 0)) : deleted.thenApply(n -> count(200, n));
    }

    private static Response count(int status, int messages) {
        return Response.of(status, Map.of("message_count", UnsignedLong.valueOf(messages)));
    }

    // ---- exchanges ----------------------------------------------------------------------------------------

    private Response declareExchange(String name, Map<String, Object> body) {
        if (name.isEmpty()) {
            return Response.error(403, DEFAULT_EXCHANGE_REFUSED);
        }
        require(Permission.CONFIGURE, Access.Resource.EXCHANGE, name);
        Map<String, Object> arguments = arguments(body);
        if (vhost.exchange(name) == null) {
            // as RabbitMQ checks a new exchange only: its name, then read on it and write on its alternate exchange
            Response refused = badName(name);
            if (refused == null) {
                refused = reserved("exchange", name);
            }
            if (refused != null) {
                return refused;
            }
            if (arguments.get("alternate-exchange") instanceof String ae) {
                require(Permission.READ, Access.Resource.EXCHANGE, name);
                require(Permission.WRITE, Access.Resource.EXCHANGE, ae);
            }
        }
        Object type = body.getOrDefault("type", "direct");
        Exchange exchange = new Exchange(name, Exchange.Type.of(type.toString()), flag(body, "durable", true),
            flag(body, "auto_delete", false), flag(body, "internal", false), arguments);
        vhost.declareExchange(exchange);
        return Response.of(204, null);
    }

    /** @param caughtUp whether this node has applied what the cluster committed when the delete arrived */
    private CompletableFuture<Response> deleteExchange(String name, boolean caughtUp) {
        Response refused = badName(name);
        if (refused == null) {
            refused = name.isEmpty() ? Response.error(403, DEFAULT_EXCHANGE_REFUSED) : reserved("exchange", name);
        }
        if (refused != null) {
            return done(refused);
        }
        require(Permission.CONFIGURE, Access.Resource.EXCHANGE, name);
        if (vhost.exchange(name) == null && !caughtUp && vhost.clustered()) {
            // declared on another node and not applied here yet? Look again once it would be
            return vhost.caughtUp(String.format(MetadataTimeouts.EXCHANGE_DELETE, name, vhost.name()))
                .thenComposeAsync(done -> deleteExchange(name, true), executor);
        }
        vhost.deleteExchange(name);
        return done(Response.of(204, null));
    }

    // ---- bindings -----------------------------------------------------------------------------------------

    private static Binding binding(Map<String, Object> body) {
        String source = (String) body.get("source");
        String queue = (String) body.get("destination_queue");
        String exchange = (String) body.get("destination_exchange");
        if (source == null || (queue == null) == (exchange == null)) {
            throw new IllegalArgumentException("a binding needs a source and one destination_queue or destination_exchange");
        }
        return new Binding(source, queue != null ? Destination.queue(queue) : Destination.exchange(exchange),
            (String) body.get("binding_key"), arguments(body));
    }

    private List<Map<String, Object>> listBindings(Map<String, String> filter) {
        List<Map<String, Object>> list = new ArrayList<>();
        // a filter by destination (how clients look a binding up) reads only that destination's bindings
        List<Binding> candidates = filter.get("dstq") != null
            ? vhost.bindings().bindingsTo(Destination.queue(filter.get("dstq")))
            : filter.get("dste") != null ? vhost.bindings().bindingsTo(Destination.exchange(filter.get("dste")))
            : vhost.bindings().all();
        for (Binding b : candidates) {
            if (matches(filter.get("src"), b.source()) && matches(filter.get("key"), b.key())
                && (filter.get("dstq") == null || !b.destination().isExchange() && b.destination().name().equals(filter.get("dstq")))
                && (filter.get("dste") == null || b.destination().isExchange() && b.destination().name().equals(filter.get("dste")))) {
                Map<String, Object> entry = new LinkedHashMap<>();
                entry.put("source", b.source());
                entry.put("vhost", vhost.name());
                entry.put("destination", b.destination().name());
                entry.put("destination_type", b.destination().isExchange() ? "exchange" : "queue");
                entry.put("binding_key", b.key());
                entry.put("arguments", b.arguments());
                entry.put("location", location(b));
                list.add(entry);
            }
        }
        return list;
    }

    private static boolean matches(String wanted, String actual) {
        return wanted == null || wanted.equals(actual);
    }

    /** The path that names one binding: {@code /bindings/src=..;dstq=..;key=..;args=<hash of the arguments>}. */
    static String location(Binding b) {
        return "/bindings/src=" + encode(b.source()) + (b.destination().isExchange() ? ";dste=" : ";dstq=")
            + encode(b.destination().name()) + ";key=" + encode(b.key()) + ";args=" + argumentsHash(b.arguments());
    }

    /**
     * Removes the binding {@code spec} names, if there is one: 204 whether it existed or not, as RabbitMQ answers.
     *
     * @param caughtUp whether this node has applied what the cluster committed when the delete arrived
     */
    private CompletableFuture<Response> deleteBinding(String spec, boolean caughtUp) {
        if (!unbind(spec) && !caughtUp && vhost.clustered()) {
            // bound on another node and not applied here yet? Look again once it would be
            return vhost.caughtUp(MetadataTimeouts.UNBIND).thenComposeAsync(done -> deleteBinding(spec, true), executor);
        }
        return done(Response.of(204, null));
    }

    /** Removes the binding {@code spec} names; false when there is none. */
    private boolean unbind(String spec) {
        Map<String, String> fields = new LinkedHashMap<>();
        for (String part : spec.split(";")) {
            int eq = part.indexOf('=');
            if (eq > 0) {
                fields.put(part.substring(0, eq), Address.decode(part.substring(eq + 1)));
            }
        }
        String args = fields.getOrDefault("args", "");
        String queue = fields.get("dstq");
        if (!fields.containsKey("src") || (queue == null) == (fields.get("dste") == null)) {
            throw new IllegalArgumentException("bad binding path segment '" + spec + "'");
        }
        Destination destination = queue != null ? Destination.queue(queue) : Destination.exchange(fields.get("dste"));
        String key = fields.getOrDefault("key", "");
        requireBinding(new Binding(fields.get("src"), destination, key, Map.of()));
        for (Binding b : vhost.bindings().bindingsTo(destination)) {
            if (b.source().equals(fields.get("src")) && b.key().equals(key)
                && (args.isEmpty() ? b.arguments().isEmpty() : argumentsHash(b.arguments()).equals(args))) {
                vhost.unbind(b);
                return true;
            }
        }
        return false;
    }

    /** A stable name for a binding's arguments: SHA-256 of their sorted text, base64url (empty for none). */
    static String argumentsHash(Map<String, Object> arguments) {
        if (arguments.isEmpty()) {
            return "";
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256")
                .digest(new TreeMap<>(arguments).toString().getBytes(StandardCharsets.UTF_8));
            return Base64.getUrlEncoder().withoutPadding().encodeToString(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    private static Map<String, String> queryParameters(String query) {
        Map<String, String> parameters = new LinkedHashMap<>();
        for (String pair : query.split("&")) {
            int eq = pair.indexOf('=');
            if (eq > 0) {
                parameters.put(pair.substring(0, eq), Address.decode(pair.substring(eq + 1)));
            }
        }
        return parameters;
    }

    /** RFC 3986 percent-encoding of a path segment. */
    public static String encode(String value) {
        StringBuilder out = new StringBuilder();
        for (byte b : value.getBytes(StandardCharsets.UTF_8)) {
            int c = b & 0xff;
            if (Character.isLetterOrDigit(c) && c < 0x80 || c == '-' || c == '.' || c == '_' || c == '~') {
                out.append((char) c);
            } else {
                out.append('%').append(String.format("%02X", c));
            }
        }
        return out.toString();
    }
}
