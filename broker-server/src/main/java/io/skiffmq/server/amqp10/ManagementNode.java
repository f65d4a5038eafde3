package io.skiffmq.server.amqp10;

import io.skiffmq.core.BrokerException;
import io.skiffmq.core.Exchange;
import io.skiffmq.core.MetadataTimeouts;
import io.skiffmq.core.VirtualHost;
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

/**
 * RabbitMQ 4's HTTP-over-AMQP management API, as the RabbitMQ AMQP 1.0 clients use it: queues, exchanges and
 * bindings, by method and path, with maps as bodies and HTTP status codes as answers (200, 201, 204, 400, 403,
 * 404, 409), each where RabbitMQ gives it. Names in paths are percent-encoded. A permission refused is no status:
 * the request fails with a session error ({@link LinkPermits#refused}), which ends the requesting session, as
 * RabbitMQ 4 answers it. The queue requests are {@link ManagementQueues}'s; exchanges and bindings are here.
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
    private final Executor executor;
    /** Each request's permission checks (a fresh {@link Access}: requests run on several threads); null: none. */
    private final Supplier<Access> permits;
    /** The requests come from another node of the cluster, which may ask for every queue's counts. */
    private final boolean fromNode;
    private final ManagementQueues queues;

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
        this.executor = executor;
        this.queues = new ManagementQueues(this, vhost, node, owner, executor);
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
            return done(Response.of(200, queues.counts()));
        }
        if (resource.equals("queues") && parts.length == 2) {
            String name = Address.decode(parts[1]);
            return switch (method) {
                case "PUT" -> queues.declare(name, map(body, QUEUE_FIELDS));
                case "GET" -> {
                    requireAny(Access.Resource.QUEUE, name);
                    yield queues.info(name);
                }
                case "DELETE" -> queues.delete(name, false);
                default -> done(Response.error(405, method + " " + path));
            };
        }
        if (resource.equals("queues") && parts.length == 3 && parts[2].equals("messages") && method.equals("DELETE")) {
            String name = Address.decode(parts[1]);
            require(Permission.READ, Access.Resource.QUEUE, name);
            return queues.purge(name, false);
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
    void require(Permission permission, Access.Resource resource, String name) {
        if (permits != null) {
            LinkPermits.refuseIf(permits.get().refusal(permission, resource, name));
        }
    }

    /**
     * Any of the three permissions, as RabbitMQ 4.3 checks a queue's {@code GET} (its 0-9-1 passive declare's
     * check): read, write, then configure, and the last refusal is the one given.
     */
    void requireAny(Access.Resource resource, String name) {
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
    static Response badName(String name) {
        String bad = lineBreak(name);
        return bad == null ? null : Response.error(400, bad);
    }

    /** RabbitMQ's text for a name holding a line break, or null. */
    private static String lineBreak(String name) {
        return name.indexOf('\n') >= 0 || name.indexOf('\r') >= 0 ? "Bad name '" + name
            + "': line feed and carriage return characters not allowed" : null;
    }

    /** RabbitMQ's 403 for a name with the reserved prefix {@code amq.}, or null. */
    Response reserved(String kind, String name) {
        return name.startsWith("amq.") ? Response.error(403, RoutingErrors.resource(kind, name, vhost.name())
            + " starts with reserved prefix 'amq.'") : null;
    }

    static CompletableFuture<Response> done(Response response) {
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

    static boolean flag(Map<String, Object> body, String name, boolean otherwise) {
        Object value = body.get(name);
        return value == null ? otherwise : (Boolean) value;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> arguments(Map<String, Object> body) {
        Object args = body.get("arguments");
        return args == null ? Map.of() : (Map<String, Object>) args;
    }

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
