package io.skiffmq.server.http;

import io.skiffmq.core.VirtualHost;

/**
 * {@code /api/definitions}: export (GET) and import (POST) of RabbitMQ's definitions document, for the whole
 * broker (administrators) or one virtual host. Stateless; safe from any thread.
 */
final class DefinitionsResources {
    private final Lookups lookups;
    private final tools.jackson.databind.ObjectMapper mapper;

    DefinitionsResources(Lookups lookups, tools.jackson.databind.ObjectMapper mapper) {
        this.lookups = lookups;
        this.mapper = mapper;
    }

    void register(Router router) {
        router.sync("GET", "/api/definitions", r -> {
            r.caller().requireAdministrator();
            return ApiResponse.ok(DefinitionsExport.all(lookups.broker()));
        }).sync("POST", "/api/definitions", r -> {
            r.caller().requireAdministrator();
            new DefinitionsImport(lookups.broker(), null).apply(r.json(mapper));
            return ApiResponse.noContent();
        }).sync("GET", "/api/definitions/{vhost}", r -> {
            r.caller().requireAdministrator();
            VirtualHost vhost = lookups.vhost(r.caller(), r.variable("vhost"));
            return ApiResponse.ok(DefinitionsExport.of(lookups.broker(), vhost));
        }).sync("POST", "/api/definitions/{vhost}", r -> {
            r.caller().requireAdministrator();
            VirtualHost vhost = lookups.vhost(r.caller(), r.variable("vhost"));
            new DefinitionsImport(lookups.broker(), vhost.name()).apply(r.json(mapper));
            return ApiResponse.noContent();
        });
    }
}
