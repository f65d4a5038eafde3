package io.skiffmq.server.http;

/**
 * Ours, for rabbitmqctl's stop_app and start_app (which RabbitMQ runs over the Erlang distribution):
 * {@code POST /api/app/stop} closes the client listeners and connections, {@code POST /api/app/start} opens the
 * listeners again; administrators only, 204 either way, also when there is nothing to do. Stateless.
 */
final class ApplicationResources {
    private final NodeApplication application;

    ApplicationResources(NodeApplication application) {
        this.application = application;
    }

    void register(Router router) {
        router.sync("POST", "/api/app/stop", r -> {
            r.caller().requireAdministrator();
            application.stop();
            return ApiResponse.noContent();
        }).sync("POST", "/api/app/start", r -> {
            r.caller().requireAdministrator();
            try {
                application.start();
            } catch (IllegalStateException e) {
                throw ApiException.unavailable(e.getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw ApiException.unavailable("interrupted");
            }
            return ApiResponse.noContent();
        });
    }
}
