package io.skiffmq.server.http;

import io.skiffmq.core.BrokerException;
import io.skiffmq.server.Broker;
import io.skiffmq.server.auth.Credentials;
import io.skiffmq.server.auth.LoginResult;
import io.skiffmq.server.auth.SaslAuthenticator;
import io.skiffmq.core.definitions.BrokerDefinitions.UserDefinition;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * The API without HTTP: checks the basic-authentication credentials on an authentication thread (as AMQP logins
 * are checked, with the same failed-login rate limit), requires a management tag, then runs the endpoint the
 * {@link Router} finds on the broker's management executor, never an event loop; an open route (a health check
 * RabbitMQ answers to anyone) skips the first two. Errors become RabbitMQ's
 * {@code {"error":"...","reason":"..."}} bodies. Thread-safe.
 */
final class HttpApi {
    private static final System.Logger LOG = System.getLogger(HttpApi.class.getName());

    /** RabbitMQ's realm. */
    static final String AUTH_REALM = "Basic realm=\"RabbitMQ Management\"";

    private final Broker broker;
    private final SaslAuthenticator sasl;
    private final Router router;
    private final ObjectMapper mapper = JsonMapper.builder().build();

    HttpApi(Broker broker, SaslAuthenticator sasl, Router router) {
        this.broker = broker;
        this.sasl = sasl;
        this.router = router;
    }

    ObjectMapper mapper() {
        return mapper;
    }

    /** Answers one request; the future never fails (a failure is an error answer). */
    CompletableFuture<ApiResponse> serve(String method, String rawPath, Map<String, String> query, byte[] body,
            Map<String, String> headers, InetAddress remote) {
        CompletableFuture<ApiResponse> answer = authenticated(method, rawPath, query, body, headers, remote);
        // a script's request (the web console's) gets no challenge: a browser would open its own login dialog
        return "XMLHttpRequest".equalsIgnoreCase(headers.get("x-requested-with"))
            ? answer.thenApply(ApiResponse::withoutChallenge) : answer;
    }

    private CompletableFuture<ApiResponse> authenticated(String method, String rawPath, Map<String, String> query,
            byte[] body, Map<String, String> headers, InetAddress remote) {
        if (router.isOpen(method, rawPath)) {
            return CompletableFuture.supplyAsync(() -> router.match(method, rawPath), broker.managementExecutor())
                .thenCompose(match -> match.endpoint().handle(new ApiRequest(method, match.variables(), query, body,
                    headers, null)))
                .handle((response, failure) -> failure == null ? response : error(failure));
        }
        Credentials credentials = basic(headers.get("authorization"));
        if (credentials == null) {
            return CompletableFuture.completedFuture(error(ApiException.notAuthenticated()));
        }
        return sasl.login(credentials, remote).thenComposeAsync(login -> {
            if (login.refusal() == LoginResult.Refusal.LOOPBACK_ONLY) {
                // rabbit_web_dispatch_access_control's answer for a loopback-only user from afar
                throw ApiException.notAuthorised("User can only log in via localhost");
            }
            if (!login.succeeded()) {
                if (broker.cluster() != null && broker.accessControl().definitions().users().isEmpty()) {
                    // a clustered node's first start: its users come with the cluster's definitions, once a metadata
                    // leader has committed them; until then no login can succeed, whoever asks
                    throw ApiException.serviceUnavailable("this node has no users yet: it waits for the cluster's"
                        + " definitions");
                }
                throw ApiException.notAuthenticated();
            }
            UserDefinition user = broker.accessControl().user(login.user());
            Caller caller = new Caller(login.user(), user == null ? java.util.List.of() : user.tags());
            if (!caller.management()) {
                throw ApiException.notAuthorised("Not management user");
            }
            Router.Match match = router.match(method, rawPath);
            return match.endpoint().handle(new ApiRequest(method, match.variables(), query, body, headers, caller));
        }, broker.managementExecutor()).handle((response, failure) -> failure == null ? response : error(failure));
    }

    /** The user and password of an {@code Authorization: Basic} header, or null. */
    private static Credentials basic(String authorization) {
        if (authorization == null || !authorization.regionMatches(true, 0, "Basic ", 0, 6)) {
            return null;
        }
        String decoded;
        try {
            decoded = new String(Base64.getDecoder().decode(authorization.substring(6).strip()),
                StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return null;
        }
        int colon = decoded.indexOf(':');
        return colon < 0 ? null : new Credentials(SaslAuthenticator.PLAIN, decoded.substring(0, colon),
            decoded.substring(colon + 1));
    }

    /** A failure as RabbitMQ's error answer. */
    ApiResponse error(Throwable failure) {
        Throwable e = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause()
            : failure;
        int status;
        String error;
        if (e instanceof ApiException api) {
            status = api.status();
            error = api.error();
        } else if (e instanceof BrokerException b) {
            status = switch (b.kind()) {
                case NOT_FOUND -> 404;
                case ACCESS_REFUSED -> 403;
                case NOT_IMPLEMENTED -> 501;
                case TIMEOUT -> 503; // RabbitMQ's answer when Khepri times out
                default -> 400;
            };
            error = status == 404 ? "Object Not Found" : status == 503 ? "timeout" : "bad_request";
        } else if (e instanceof io.skiffmq.cluster.NoMajorityException) {
            status = 503; // RabbitMQ's answer when Khepri times out
            error = "timeout";
        } else if (e instanceof IllegalArgumentException || e instanceof ClassCastException) {
            status = 400;
            error = "bad_request";
        } else {
            LOG.log(System.Logger.Level.ERROR, "HTTP API request failed", e);
            status = 500;
            error = "internal_error";
        }
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("error", error);
        body.put("reason", String.valueOf(e.getMessage()));
        return new ApiResponse(status, body, ApiException.NOT_AUTHENTICATED.equals(error)
            ? Map.of("WWW-Authenticate", AUTH_REALM) : Map.of());
    }

    byte[] json(Object body) {
        return mapper.writeValueAsBytes(body);
    }
}
