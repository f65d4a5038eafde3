package io.skiffmq.server.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The routing table, percent-decoding of path variables, and RabbitMQ's paging. */
class RouterTest {
    private final Router router = new Router()
        .sync("GET", "/api/queues/{vhost}/{name}", r -> ApiResponse.ok(r.variables()))
        .sync("GET", "/api/queues/{vhost}/{name}/bindings", r -> ApiResponse.ok("bindings"))
        .sync("GET", "/api/queues", r -> ApiResponse.ok("all"));

    @Test
    void variablesAreDecodedAfterTheSplit() {
        Router.Match match = router.match("GET", "/api/queues/%2F/a%2Fb%20c");
        assertThat(match.variables()).isEqualTo(Map.of("vhost", "/", "name", "a/b c"));
        assertThat(router.match("GET", "/api/queues/v/%C3%A9t%C3%A9").variables()).containsEntry("name", "été");
        assertThat(router.match("GET", "/api/queues/v/a+b").variables()).containsEntry("name", "a+b");
        assertThat(router.match("GET", "/api/queues/").variables()).isEmpty();
    }

    @Test
    void anotherMethodIs405AndAnotherPath404() {
        assertThatThrownBy(() -> router.match("PUT", "/api/queues/v/q")).isInstanceOfSatisfying(ApiException.class,
            e -> assertThat(e.status()).isEqualTo(405));
        assertThatThrownBy(() -> router.match("GET", "/api/queues/v/q/unknown"))
            .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.status()).isEqualTo(404));
        assertThatThrownBy(() -> router.match("GET", "/api/queues/%zz/q"))
            .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.status()).isEqualTo(400));
        assertThatThrownBy(() -> router.match("GET", "/api/queues/v/%4"))
            .isInstanceOfSatisfying(ApiException.class, e -> assertThat(e.status()).isEqualTo(400));
    }

    private static List<Map<String, Object>> items(int count) {
        List<Map<String, Object>> items = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            items.add(Map.of("name", String.format("q%03d", i), "messages", count - i));
        }
        return items;
    }

    @Test
    void pagingAsRabbitMqPages() {
        @SuppressWarnings("unchecked")
        Map<String, Object> page = (Map<String, Object>) Paging.list(items(250),
            Map.of("page", "3", "page_size", "100")).body();
        assertThat(page).containsEntry("filtered_count", 250).containsEntry("item_count", 50)
            .containsEntry("page", 3).containsEntry("page_count", 3).containsEntry("page_size", 100)
            .containsEntry("total_count", 250);
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> sorted = (List<Map<String, Object>>) Paging.list(items(5),
            Map.of("sort", "messages")).body();
        assertThat(sorted).extracting(m -> m.get("name")).containsExactly("q004", "q003", "q002", "q001", "q000");
        @SuppressWarnings("unchecked")
        Map<String, Object> empty = (Map<String, Object>) Paging.list(List.of(), Map.of("page", "1")).body();
        assertThat(empty).containsEntry("page_count", 0).containsEntry("item_count", 0);
        assertThatThrownBy(() -> Paging.list(items(5), Map.of("page", "0"))).isInstanceOf(ApiException.class);
        assertThat(Paging.list(List.of(Map.of("name", "q", "messages", 3, "queue", Map.of("vhost", "/", "x", 1))),
            Map.of("columns", "name,queue.vhost")).body())
            .isEqualTo(List.of(Map.of("name", "q", "queue", Map.of("vhost", "/"))));
        assertThatThrownBy(() -> Paging.list(items(5), Map.of("page", "1", "name", "(", "use_regex", "true")))
            .isInstanceOf(ApiException.class);
    }
}
