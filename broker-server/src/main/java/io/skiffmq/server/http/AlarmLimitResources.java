package io.skiffmq.server.http;

import io.skiffmq.core.alarm.JvmReadings;
import io.skiffmq.core.alarm.ResourceAlarms;
import io.skiffmq.core.alarm.ResourceMonitor;
import java.lang.management.ManagementFactory;
import java.util.Map;
import tools.jackson.databind.ObjectMapper;

/**
 * Ours, for rabbitmqctl's {@code set_vm_memory_high_watermark} and {@code set_disk_free_limit} (which RabbitMQ runs
 * over the Erlang distribution): {@code PUT /api/app/memory-high-watermark} with {@code {"relative": f}} (a fraction
 * of the maximum heap, as the {@code memory-high-watermark} setting reads one) or {@code {"absolute": bytes}}, and
 * {@code PUT /api/app/disk-free-limit} with {@code {"absolute": bytes}} or {@code {"mem_relative": f}} (a multiple
 * of the machine's RAM, as in RabbitMQ). Administrators only; the new limit holds until the next restart, as in
 * RabbitMQ, and the alarm rises or clears by it before the answer (204). Also {@code PUT} and {@code DELETE
 * /api/app/alarms/{memory|disk}}: an alarm raised or cleared by hand, as {@code rabbit_alarm:set_alarm} and
 * {@code clear_alarm} do (RabbitMQ's client test suites call them through {@code rabbitmqctl eval}); the monitor
 * clears only what it raised itself. Stateless.
 */
final class AlarmLimitResources {
    private final ResourceMonitor monitor;
    private final ResourceAlarms alarms;
    private final ObjectMapper mapper;

    AlarmLimitResources(ResourceMonitor monitor, ResourceAlarms alarms, ObjectMapper mapper) {
        this.monitor = monitor;
        this.alarms = alarms;
        this.mapper = mapper;
    }

    void register(Router router) {
        router.sync("PUT", "/api/app/memory-high-watermark", r -> {
            r.caller().requireAdministrator();
            Map<String, Object> body = r.json(mapper);
            long limit = body.containsKey("relative")
                ? fractionOf(JvmReadings.memoryCeiling(), number(body, "relative"), 1.0)
                : absolute(body);
            monitor.memoryLimit(limit);
            return ApiResponse.noContent();
        }).sync("PUT", "/api/app/disk-free-limit", r -> {
            r.caller().requireAdministrator();
            Map<String, Object> body = r.json(mapper);
            long limit = body.containsKey("mem_relative")
                ? fractionOf(totalMemory(), number(body, "mem_relative"), Double.MAX_VALUE)
                : absolute(body);
            monitor.diskFreeLimit(limit);
            return ApiResponse.noContent();
        }).sync("PUT", "/api/app/alarms/{resource}", r -> {
            r.caller().requireAdministrator();
            alarms.raise(resource(r.variable("resource")));
            return ApiResponse.noContent();
        }).sync("DELETE", "/api/app/alarms/{resource}", r -> {
            r.caller().requireAdministrator();
            alarms.clear(resource(r.variable("resource")));
            return ApiResponse.noContent();
        });
    }

    private static ResourceAlarms.Resource resource(String name) {
        for (ResourceAlarms.Resource resource : ResourceAlarms.Resource.values()) {
            if (resource.text().equals(name)) {
                return resource;
            }
        }
        throw ApiException.notFound();
    }

    private static long fractionOf(long whole, double fraction, double max) {
        if (!(fraction >= 0 && fraction <= max)) {
            throw ApiException.badRequest(max == 1.0 ? "the threshold should be a fraction between 0.0 and 1.0"
                : "the fraction must be >= 0");
        }
        return (long) (whole * fraction);
    }

    private static long absolute(Map<String, Object> body) {
        if (!(body.get("absolute") instanceof Number n) || n instanceof Double || n.longValue() < 0) {
            throw ApiException.badRequest("give \"absolute\": a whole number of bytes >= 0, or a fraction");
        }
        return n.longValue();
    }

    private static double number(Map<String, Object> body, String name) {
        if (!(body.get(name) instanceof Number n)) {
            throw ApiException.badRequest("\"" + name + "\" must be a number");
        }
        return n.doubleValue();
    }

    private static long totalMemory() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getTotalMemorySize();
        }
        throw ApiException.unavailable("this JVM does not report the machine's memory");
    }
}
