package io.skiffmq.server.http;

import io.skiffmq.core.BrokerException;
import io.skiffmq.server.Admin;
import io.skiffmq.server.authz.AccessControl;
import io.skiffmq.core.definitions.BrokerDefinitions;
import io.skiffmq.core.definitions.BrokerDefinitions.PermissionDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.TopicPermissionDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.UserDefinition;
import io.skiffmq.core.definitions.BrokerDefinitions.VhostDefinition;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.BiPredicate;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * {@code /api/vhosts}, {@code /api/users}, {@code /api/permissions} and {@code /api/topic-permissions}, through
 * {@link Admin}. Listing virtual hosts is for every management user (those it may see); everything about users and
 * permissions, and changing virtual hosts, is for administrators, as in RabbitMQ. Stateless; safe from any thread
 * (Admin serialises).
 */
final class AccessResources {
    private final Lookups lookups;
    private final tools.jackson.databind.ObjectMapper mapper;
    private final RateSampler rates;

    AccessResources(Lookups lookups, tools.jackson.databind.ObjectMapper mapper, RateSampler rates) {
        this.lookups = lookups;
        this.mapper = mapper;
        this.rates = rates;
    }

    private Admin admin() {
        return lookups.broker().admin();
    }

    private AccessControl access() {
        return lookups.broker().accessControl();
    }

    void register(Router router) {
        router.sync("GET", "/api/vhosts", this::vhosts)
            .sync("GET", "/api/vhosts/{vhost}", r -> {
                lookups.vhost(r.caller(), r.variable("vhost"));
                return ApiResponse.ok(vhost(access().vhost(r.variable("vhost"))));
            })
            .sync("PUT", "/api/vhosts/{vhost}", this::putVhost)
            .sync("DELETE", "/api/vhosts/{vhost}", this::deleteVhost)
            .sync("POST", "/api/vhosts/{vhost}/deletion/protection", r -> protect(r, true))
            .sync("DELETE", "/api/vhosts/{vhost}/deletion/protection", r -> protect(r, false))
            .sync("GET", "/api/vhosts/{vhost}/permissions", r -> listed(r, existingVhost(r).permissions(),
                p -> p.vhost().equals(r.variable("vhost")), Shapes::permission))
            .sync("GET", "/api/vhosts/{vhost}/topic-permissions", r -> listed(r,
                existingVhost(r).topicPermissions(), p -> p.vhost().equals(r.variable("vhost")),
                Shapes::topicPermission))
            .sync("GET", "/api/users", r -> {
                r.caller().requireAdministrator();
                List<Map<String, Object>> users = new ArrayList<>();
                admin().definitions().users().forEach(u -> users.add(Shapes.user(u)));
                return Paging.list(users, r.query());
            })
            .sync("GET", "/api/users/{user}", r -> {
                r.caller().requireAdministrator();
                return ApiResponse.ok(Shapes.user(user(r.variable("user"))));
            })
            .sync("PUT", "/api/users/{user}", this::putUser)
            .sync("DELETE", "/api/users/{user}", r -> {
                r.caller().requireAdministrator();
                return admin().deleteUser(r.variable("user")) ? ApiResponse.noContent() : notFound();
            })
            .sync("GET", "/api/users/{user}/permissions", r -> listed(r, existingUser(r).permissions(),
                p -> p.user().equals(r.variable("user")), Shapes::permission))
            .sync("GET", "/api/users/{user}/topic-permissions", r -> listed(r, existingUser(r).topicPermissions(),
                p -> p.user().equals(r.variable("user")), Shapes::topicPermission))
            .sync("GET", "/api/permissions", r -> listed(r, admin().definitions().permissions(), p -> true,
                Shapes::permission))
            .sync("GET", "/api/permissions/{vhost}/{user}", r -> {
                r.caller().requireAdministrator();
                return ApiResponse.ok(Shapes.permission(permission(r.variable("vhost"), r.variable("user"))));
            })
            .sync("PUT", "/api/permissions/{vhost}/{user}", r -> put(r, (user, vhost) -> admin().definitions()
                .permissions().stream().anyMatch(p -> p.user().equals(user) && p.vhost().equals(vhost)),
                (user, vhost, body) -> admin().setPermissions(user, vhost, Bodies.required(body, "configure"),
                    Bodies.required(body, "write"), Bodies.required(body, "read"))))
            .sync("DELETE", "/api/permissions/{vhost}/{user}", r -> {
                r.caller().requireAdministrator();
                PermissionDefinition p = permission(r.variable("vhost"), r.variable("user"));
                admin().clearPermissions(p.user(), p.vhost());
                return ApiResponse.noContent();
            })
            .sync("GET", "/api/topic-permissions", r -> listed(r, admin().definitions().topicPermissions(),
                p -> true, Shapes::topicPermission))
            .sync("GET", "/api/topic-permissions/{vhost}/{user}", r -> listed(r, topicPermissions(r),
                p -> true, Shapes::topicPermission))
            .sync("PUT", "/api/topic-permissions/{vhost}/{user}", r -> put(r, (user, vhost) -> admin().definitions()
                .topicPermissions().stream().anyMatch(p -> p.user().equals(user) && p.vhost().equals(vhost)),
                (user, vhost, body) -> admin().setTopicPermissions(user, vhost, Bodies.required(body, "exchange"),
                    Bodies.required(body, "write"), Bodies.required(body, "read"))))
            .sync("DELETE", "/api/topic-permissions/{vhost}/{user}", this::deleteTopicPermissions)
            .sync("DELETE", "/api/topic-permissions/{vhost}/{user}/{exchange}", this::deleteTopicPermissions);
    }

    private static ApiResponse notFound() {
        throw ApiException.notFound();
    }

    private Map<String, Object> vhost(VhostDefinition vhost) {
        Map<String, Object> shape = Shapes.vhost(vhost, lookups.node());
        shape.putAll(rates.vhost(vhost.name()));
        return shape;
    }

    private ApiResponse vhosts(ApiRequest request) {
        List<Map<String, Object>> items = new ArrayList<>();
        for (VhostDefinition vhost : admin().definitions().vhosts()) {
            if (request.caller().sees(access(), vhost.name())) {
                items.add(vhost(vhost));
            }
        }
        return Paging.list(items, request.query());
    }

    private ApiResponse putVhost(ApiRequest request) {
        request.caller().requireAdministrator();
        Map<String, Object> body = request.json(mapper);
        String name = request.variable("vhost");
        VhostDefinition before = access().vhost(name);
        boolean existed = before != null;
        VhostMetadata metadata = VhostMetadata.of(body, body, before);
        admin().createVhost(name);
        metadata.set(admin(), name);
        String creator = request.caller().user();
        if (!existed && access().user(creator) != null) {
            // as RabbitMQ's put_vhost does: the user who made it may use it at once
            admin().setPermissions(creator, name, ".*", ".*", ".*");
        }
        return ApiResponse.createdOr(existed);
    }

    private ApiResponse deleteVhost(ApiRequest request) {
        request.caller().requireAdministrator();
        try {
            return admin().deleteVhost(request.variable("vhost")) ? ApiResponse.noContent() : notFound();
        } catch (BrokerException e) {
            if (e.kind() != BrokerException.Kind.PRECONDITION_FAILED) {
                throw e;
            }
            throw new ApiException(412, "precondition_failed", e.getMessage()); // protected from deletion
        }
    }

    /**
     * {@code POST} and {@code DELETE /api/vhosts/{vhost}/deletion/protection}, RabbitMQ 4.1's
     * {@code rabbit_mgmt_wm_vhost_deletion_protection}: 204; a virtual host that does not exist is a 404.
     */
    private ApiResponse protect(ApiRequest request, boolean protect) {
        request.caller().requireAdministrator();
        String name = request.variable("vhost");
        if (access().vhost(name) == null) {
            if (!protect) {
                throw ApiException.notFound();
            }
            throw new ApiException(404, "not_found", "Cannot enable deletion protection of virtual host '" + name
                + "' because it does not exist");
        }
        admin().setVhostProtection(name, protect);
        return ApiResponse.noContent();
    }

    private UserDefinition user(String name) {
        UserDefinition user = access().user(name);
        if (user == null) {
            throw ApiException.notFound();
        }
        return user;
    }

    private ApiResponse putUser(ApiRequest request) {
        request.caller().requireAdministrator();
        String name = request.variable("user");
        Map<String, Object> body = request.json(mapper);
        List<String> tags = tags(body.get("tags"));
        boolean existed = access().user(name) != null;
        if (body.get("password") != null) {
            admin().putUser(name, body.get("password").toString(), tags);
        } else if (body.get("password_hash") != null) {
            admin().putUser(name, body.get("password_hash").toString(),
                Bodies.string(body, "hashing_algorithm", "rabbit_password_hashing_sha256"), tags);
        } else {
            throw ApiException.badRequest("password or password_hash must be set");
        }
        return ApiResponse.createdOr(existed);
    }

    /** Tags as a list or, as RabbitMQ also takes them, one comma-separated string. */
    static List<String> tags(Object tags) {
        if (tags == null) {
            return List.of();
        }
        if (tags instanceof List<?> list) {
            return list.stream().map(String::valueOf).map(String::strip).filter(t -> !t.isEmpty()).toList();
        }
        return Arrays.stream(tags.toString().split(",")).map(String::strip).filter(t -> !t.isEmpty()).toList();
    }

    private PermissionDefinition permission(String vhost, String user) {
        for (PermissionDefinition p : admin().definitions().permissions()) {
            if (p.vhost().equals(vhost) && p.user().equals(user)) {
                return p;
            }
        }
        throw ApiException.notFound();
    }

    /** Sets a user's permission or topic permission in a virtual host from a request's body. */
    private interface Grant {
        void set(String user, String vhost, Map<String, Object> body);
    }

    /**
     * PUT of a permission or topic permission, as RabbitMQ answers it: 400 {@code vhost_or_user_not_found} when
     * either is missing; 201 when the user had none there ({@code had}), else 204.
     */
    private ApiResponse put(ApiRequest request, BiPredicate<String, String> had, Grant grant) {
        request.caller().requireAdministrator();
        String vhost = request.variable("vhost");
        String user = request.variable("user");
        if (access().vhost(vhost) == null || access().user(user) == null) {
            throw ApiException.badRequest("vhost_or_user_not_found");
        }
        Map<String, Object> body = request.json(mapper);
        boolean existed = had.test(user, vhost);
        grant.set(user, vhost, body);
        return ApiResponse.createdOr(existed);
    }

    /** The definitions, once the path's virtual host is known to exist (404 otherwise). */
    private BrokerDefinitions existingVhost(ApiRequest request) {
        request.caller().requireAdministrator();
        if (access().vhost(request.variable("vhost")) == null) {
            throw ApiException.notFound();
        }
        return admin().definitions();
    }

    /** The definitions, once the path's user is known to exist (404 otherwise). */
    private BrokerDefinitions existingUser(ApiRequest request) {
        request.caller().requireAdministrator();
        user(request.variable("user"));
        return admin().definitions();
    }

    /** The definitions {@code which} selects, each as {@code shape} makes it: for administrators only. */
    private static <T> ApiResponse listed(ApiRequest request, List<T> all, Predicate<T> which,
            Function<T, Map<String, Object>> shape) {
        request.caller().requireAdministrator();
        List<Map<String, Object>> items = new ArrayList<>();
        for (T definition : all) {
            if (which.test(definition)) {
                items.add(shape.apply(definition));
            }
        }
        return ApiResponse.ok(items);
    }

    /**
     * The path's user's topic permissions in the path's virtual host; 404 when the user or the virtual host does
     * not exist, or there are none (RabbitMQ's {@code rabbit_mgmt_wm_topic_permission}: {@code resource_exists}).
     */
    private List<TopicPermissionDefinition> topicPermissions(ApiRequest request) {
        request.caller().requireAdministrator();
        String vhost = request.variable("vhost");
        String user = request.variable("user");
        List<TopicPermissionDefinition> found = admin().definitions().topicPermissions().stream()
            .filter(p -> p.vhost().equals(vhost) && p.user().equals(user)).toList();
        if (found.isEmpty() || access().user(user) == null || access().vhost(vhost) == null) {
            throw ApiException.notFound();
        }
        return found;
    }

    /** All of the user's topic permissions in the vhost, or those for the path's exchange; 404 when it has none. */
    private ApiResponse deleteTopicPermissions(ApiRequest request) {
        topicPermissions(request);
        admin().clearTopicPermissions(request.variable("user"), request.variable("vhost"),
            request.variable("exchange"));
        return ApiResponse.noContent();
    }
}
