package io.skiffmq.server.ctl;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Rows printed as rabbitmqctl prints them: tab-separated with a header line of the column names, or with
 * {@code --formatter json} a JSON array of objects holding those columns. Strings are printed as they are, numbers
 * and booleans as JSON writes them, null as nothing, a list of names as rabbitmqctl prints one ({@code [a, b]}),
 * and other objects and lists (arguments) as JSON. Stateless.
 */
final class Table {
    private Table() {
    }

    /**
     * @param rows each row's values by column name, in {@code columns}' order
     * @param headers whether the command prints a header line unless told not to (rabbitmqctl's
     *     {@code table_headers} default)
     */
    static void print(SkiffmqCtl ctl, List<String> columns, List<Map<String, Object>> rows, boolean headers) {
        PrintWriter out = ctl.out();
        if (ctl.json()) {
            List<Map<String, Object>> selected = new ArrayList<>();
            for (Map<String, Object> row : rows) {
                Map<String, Object> item = new LinkedHashMap<>();
                for (String column : columns) {
                    item.put(column, row.get(column));
                }
                selected.add(item);
            }
            out.println(ApiClient.JSON.writeValueAsString(selected));
            return;
        }
        if (headers && ctl.tableHeaders()) {
            out.println(String.join("\t", columns));
        }
        for (Map<String, Object> row : rows) {
            List<String> cells = new ArrayList<>();
            for (String column : columns) {
                cells.add(cell(row.get(column)));
            }
            out.println(String.join("\t", cells));
        }
    }

    static String cell(Object value) {
        if (value == null) {
            return "";
        }
        if (value instanceof String s) {
            return s;
        }
        if (value instanceof List<?> list && list.stream().allMatch(String.class::isInstance)) {
            return "[" + String.join(", ", list.stream().map(String.class::cast).toList()) + "]";
        }
        return ApiClient.JSON.writeValueAsString(value);
    }
}
