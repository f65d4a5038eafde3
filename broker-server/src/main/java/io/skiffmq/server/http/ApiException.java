package io.skiffmq.server.http;

/**
 * A request the API refuses, answered as RabbitMQ answers: the HTTP status and the body
 * {@code {"error":"...","reason":"..."}}. Immutable.
 */
final class ApiException extends RuntimeException {
    static final String NOT_AUTHENTICATED = "not_authorized";

    private final int status;
    private final String error;

    ApiException(int status, String error, String reason) {
        super(reason, null, false, false);
        this.status = status;
        this.error = error;
    }

    static ApiException notFound() {
        return new ApiException(404, "Object Not Found", "Not Found");
    }

    static ApiException badRequest(String reason) {
        return new ApiException(400, "bad_request", reason);
    }

    /** The cluster could not commit a change in time (RabbitMQ answers 503 when Khepri times out). */
    static ApiException unavailable(String reason) {
        return new ApiException(503, "timeout", reason);
    }

    /** RabbitMQ's 503 of a refused operation ({@code rabbit_mgmt_util:service_unavailable/3}). */
    static ApiException serviceUnavailable(String reason) {
        return new ApiException(503, "service_unavailable", reason);
    }

    /** RabbitMQ answers a user whose tags or permissions do not allow a request with 401, not 403. */
    static ApiException notAuthorised(String reason) {
        return new ApiException(401, "not_authorised", reason);
    }

    /** No or wrong credentials: 401 with {@code WWW-Authenticate} (RabbitMQ spells this error with a z). */
    static ApiException notAuthenticated() {
        return new ApiException(401, NOT_AUTHENTICATED, "Not_Authorized");
    }

    int status() {
        return status;
    }

    String error() {
        return error;
    }
}
