package io.skiffmq.server.http;

import io.skiffmq.core.definitions.BrokerDefinitions.GlobalParameterDefinition;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.ObjectMapper;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code /api/global-parameters}: RabbitMQ's global runtime parameters, for policymakers and administrators
 * ({@code is_authorized_global_parameters}). SkiffMQ keeps them (durable, exported, imported) and uses none: they
 * are there so that a RabbitMQ deployment's definitions come over whole. Stateless; safe from any thread.
 */
final class GlobalParameterResources {
    private static final ObjectMapper JSON = JsonMapper.builder().build();
    private final Lookups lookups;
    private final ObjectMapper mapper;

    GlobalParameterResources(Lookups lookups, ObjectMapper mapper) {
        this.lookups = lookups;
        this.mapper = mapper;
    }

    void register(Router router) {
        router.sync("GET", "/api/global-parameters", r -> {
            require(r.caller());
            return ApiResponse.ok(all(lookups.broker().admin().definitions().globalParameters()));
        }).sync("GET", "/api/global-parameters/{name}", r -> {
            require(r.caller());
            return ApiResponse.ok(shape(find(r.variable("name"))));
        }).sync("PUT", "/api/global-parameters/{name}", r -> {
            require(r.caller());
            Map<String, Object> body = r.json(mapper);
            if (!body.containsKey("value")) {
                throw ApiException.badRequest("[{key_missing,value}]");
            }
            boolean existed = lookups.broker().admin().definitions().globalParameters().stream()
                .anyMatch(g -> g.name().equals(r.variable("name")));
            lookups.broker().admin().setGlobalParameter(r.variable("name"), text(body.get("value")));
            return ApiResponse.createdOr(existed);
        }).sync("DELETE", "/api/global-parameters/{name}", r -> {
            require(r.caller());
            if (!lookups.broker().admin().clearGlobalParameter(r.variable("name"))) {
                throw ApiException.notFound();
            }
            return ApiResponse.noContent();
        });
    }

    private static void require(Caller caller) {
        if (!caller.administrator() && !caller.tags().contains(Caller.POLICYMAKER)) {
            throw ApiException.notAuthorised("User not authorised to access object");
        }
    }

    private GlobalParameterDefinition find(String name) {
        for (GlobalParameterDefinition g : lookups.broker().admin().definitions().globalParameters()) {
            if (g.name().equals(name)) {
                return g;
            }
        }
        throw ApiException.notFound();
    }

    /** Each as RabbitMQ shows one: {@code name} and {@code value}. */
    static List<Map<String, Object>> all(List<GlobalParameterDefinition> parameters) {
        List<Map<String, Object>> all = new ArrayList<>();
        parameters.forEach(g -> all.add(shape(g)));
        return all;
    }

    private static Map<String, Object> shape(GlobalParameterDefinition g) {
        Map<String, Object> shape = new LinkedHashMap<>();
        shape.put("name", g.name());
        shape.put("value", JSON.readValue(g.value(), Object.class));
        return shape;
    }

    /**
     * A value as JSON text. A list of [key, value] pairs is a map, as {@code rabbitmqctl export_definitions} writes
     * one (RabbitMQ keeps a map as such a list and cannot tell the two apart either).
     */
    static String text(Object value) {
        if (value instanceof List<?> list && !list.isEmpty() && list.stream().allMatch(
                i -> i instanceof List<?> pair && pair.size() == 2 && pair.get(0) instanceof String)) {
            Map<String, Object> map = new LinkedHashMap<>();
            list.forEach(i -> map.put((String) ((List<?>) i).get(0), ((List<?>) i).get(1)));
            value = map;
        }
        return JSON.writeValueAsString(value);
    }
}
