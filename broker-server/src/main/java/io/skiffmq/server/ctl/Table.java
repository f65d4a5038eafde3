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

    /**
     * Rows as {@code rabbitmq-streams} prints them ({@code RabbitMQ.CLI.Formatters.PrettyTable}, on
     * {@code stdout_formatter}): a box-drawn table, the column names as its first row, one space either side of each
     * cell; nothing when there are no rows. With {@code --formatter json}, as {@link #print}.
     */
    static void printPretty(SkiffmqCtl ctl, List<String> columns, List<Map<String, Object>> rows) {
        if (ctl.json()) {
            print(ctl, columns, rows, true);
            return;
        }
        if (rows.isEmpty()) {
            return;
        }
        List<List<String>> cells = new ArrayList<>();
        cells.add(columns);
        for (Map<String, Object> row : rows) {
            cells.add(columns.stream().map(c -> cell(row.get(c))).toList());
        }
        int[] widths = new int[columns.size()];
        for (List<String> line : cells) {
            for (int i = 0; i < widths.length; i++) {
                widths[i] = Math.max(widths[i], line.get(i).codePointCount(0, line.get(i).length()));
            }
        }
        PrintWriter out = ctl.out();
        out.println(rule(widths, '┌', '┬', '┐'));
        for (int r = 0; r < cells.size(); r++) {
            StringBuilder line = new StringBuilder("│");
            for (int i = 0; i < widths.length; i++) {
                String cell = cells.get(r).get(i);
                line.append(' ').append(cell).append(" ".repeat(widths[i] - cell.codePointCount(0, cell.length())))
                    .append(" │");
            }
            out.println(line);
            if (r == 0) {
                out.println(rule(widths, '├', '┼', '┤'));
            }
        }
        out.println(rule(widths, '└', '┴', '┘'));
    }

    private static String rule(int[] widths, char left, char middle, char right) {
        StringBuilder line = new StringBuilder().append(left);
        for (int i = 0; i < widths.length; i++) {
            line.append("─".repeat(widths[i] + 2)).append(i == widths.length - 1 ? right : middle);
        }
        return line.toString();
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
