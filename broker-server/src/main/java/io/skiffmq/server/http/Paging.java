package io.skiffmq.server.http;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * RabbitMQ's listing parameters: {@code columns} (the fields to keep, comma-separated, dotted for nested ones),
 * {@code sort} (a field name, dotted for nested ones) and {@code sort_reverse} on every list; with {@code page}, also {@code page_size} (default 100, at most 500), {@code name} (a substring, or
 * a regular expression with {@code use_regex=true}), answered as
 * {@code {filtered_count, item_count, items, page, page_count, page_size, total_count}}. Stateless.
 */
final class Paging {
    static final int DEFAULT_PAGE_SIZE = 100;
    static final int MAX_PAGE_SIZE = 500;

    private Paging() {
    }

    static ApiResponse list(List<Map<String, Object>> items, Map<String, String> query) {
        List<Map<String, Object>> sorted = new ArrayList<>(items);
        String sort = query.get("sort");
        Comparator<Map<String, Object>> order = Comparator.comparing(m -> sortKey(m, sort == null ? "name" : sort),
            Paging::compare);
        sorted.sort(Boolean.parseBoolean(query.get("sort_reverse")) ? order.reversed() : order);
        if (!query.containsKey("page")) {
            return ApiResponse.ok(columns(sorted, query.get("columns")));
        }
        Page<Map<String, Object>> page = page(filter(sorted, m -> String.valueOf(m.get("name")), query), items.size(),
            query);
        return answer(page, page.slice(), query);
    }

    /** One page of a sorted, filtered list, and the counts its answer gives. */
    record Page<T>(List<T> slice, int filtered, int total, int page, int pageCount, int size) {
    }

    /**
     * The page {@code query} asks for, chosen by name alone when it sorts by name (RabbitMQ's default) or not at
     * all: only that page's items then need describing (a queue's counts are asked of its thread), not every one.
     * Null when it does not page, or sorts by another field.
     */
    static <T> Page<T> byName(List<T> items, Function<T, String> name, Map<String, String> query) {
        String sort = query.get("sort");
        if (!query.containsKey("page") || sort != null && !sort.equals("name")) {
            return null;
        }
        List<T> sorted = new ArrayList<>(items);
        Comparator<T> order = Comparator.comparing(name);
        sorted.sort(Boolean.parseBoolean(query.get("sort_reverse")) ? order.reversed() : order);
        return page(filter(sorted, name, query), items.size(), query);
    }

    private static <T> Page<T> page(List<T> filtered, int total, Map<String, String> query) {
        int page = number(query.get("page"), "page");
        int size = query.containsKey("page_size") ? number(query.get("page_size"), "page_size") : DEFAULT_PAGE_SIZE;
        if (size > MAX_PAGE_SIZE) {
            throw ApiException.badRequest("page_size must be less than or equal to " + MAX_PAGE_SIZE);
        }
        int pageCount = (filtered.size() + size - 1) / size;
        if (page > Math.max(1, pageCount)) {
            throw ApiException.badRequest("page_out_of_range");
        }
        List<T> slice = filtered.subList(Math.min((page - 1) * size, filtered.size()),
            Math.min(page * size, filtered.size()));
        return new Page<>(slice, filtered.size(), total, page, pageCount, size);
    }

    /** The paged answer: {@code items} are the page's items described, in the page's order. */
    static ApiResponse answer(Page<?> page, List<Map<String, Object>> items, Map<String, String> query) {
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("filtered_count", page.filtered());
        answer.put("item_count", items.size());
        answer.put("items", columns(items, query.get("columns")));
        answer.put("page", page.page());
        answer.put("page_count", page.pageCount());
        answer.put("page_size", page.size());
        answer.put("total_count", page.total());
        return ApiResponse.ok(answer);
    }

    /** The items with only the columns asked for (all of them when {@code columns} is null); sorted and filtered first. */
    private static List<Map<String, Object>> columns(List<Map<String, Object>> items, String columns) {
        if (columns == null) {
            return items;
        }
        String[] names = columns.split(",");
        return items.stream().map(item -> columns(item, names)).toList();
    }

    /** RabbitMQ's {@code columns}: only the fields named (dotted for nested ones), in the same nesting. */
    @SuppressWarnings("unchecked")
    private static Map<String, Object> columns(Map<String, Object> item, String[] columns) {
        Map<String, Object> kept = new LinkedHashMap<>();
        for (String column : columns) {
            String[] path = column.strip().split("\\.");
            Object value = sortKey(item, column.strip());
            if (value == null && !item.containsKey(path[0])) {
                continue;
            }
            Map<String, Object> into = kept;
            for (int i = 0; i < path.length - 1; i++) {
                into = (Map<String, Object>) into.computeIfAbsent(path[i], k -> new LinkedHashMap<String, Object>());
            }
            into.put(path[path.length - 1], value);
        }
        return kept;
    }

    private static <T> List<T> filter(List<T> items, Function<T, String> names, Map<String, String> query) {
        String name = query.get("name");
        boolean regex = Boolean.parseBoolean(query.get("use_regex"));
        if (name == null || name.isEmpty()) {
            return items;
        }
        Pattern pattern;
        try {
            pattern = regex ? Pattern.compile(name) : null;
        } catch (PatternSyntaxException e) {
            throw ApiException.badRequest("invalid regular expression: " + e.getDescription());
        }
        List<T> kept = new ArrayList<>();
        for (T item : items) {
            String itemName = names.apply(item);
            if (regex ? pattern.matcher(itemName).find() : itemName.contains(name)) {
                kept.add(item);
            }
        }
        return kept;
    }

    private static int number(String value, String name) {
        try {
            int n = Integer.parseInt(value);
            if (n < 1) {
                throw ApiException.badRequest(name + " must be a positive integer");
            }
            return n;
        } catch (NumberFormatException e) {
            throw ApiException.badRequest(name + " must be a positive integer");
        }
    }

    private static Object sortKey(Map<String, Object> item, String field) {
        Object value = item;
        for (String part : field.split("\\.")) {
            value = value instanceof Map<?, ?> m ? m.get(part) : null;
        }
        return value;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static int compare(Object a, Object b) {
        if (a == null || b == null) {
            return a == null ? (b == null ? 0 : -1) : 1;
        }
        if (a instanceof Number x && b instanceof Number y) {
            return Double.compare(x.doubleValue(), y.doubleValue());
        }
        if (a instanceof Comparable c && a.getClass() == b.getClass()) {
            return c.compareTo(b);
        }
        return a.toString().compareTo(b.toString());
    }
}
