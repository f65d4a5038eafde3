package io.skiffmq.server.ctl;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Rows printed as rabbitmqctl prints them: tab-separated with a header line of the column names, or with
 * {@code --formatter json} a JSON array of objects holding those columns. Strings are printed as they are, numbers
 * and booleans as JSON writes them, null as nothing, and objects and lists (arguments) as JSON. Stateless.
 */
final class Table {
    private Table() {
    }

    /** @param rows each row's values by column name, in {@code columns}' order */
    static void print(SkiffmqCtl ctl, List<String> columns, List<Map<String, Object>> rows) {
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
        if (ctl.tableHeaders()) {
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
        return ApiClient.JSON.writeValueAsString(value);
    }
}
