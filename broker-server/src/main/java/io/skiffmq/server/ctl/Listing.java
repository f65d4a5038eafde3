package io.skiffmq.server.ctl;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;
import picocli.CommandLine.Parameters;

/**
 * What every {@code list_*} command does: fetch the rows from the HTTP API, print the informational line, then the
 * columns as a table or JSON ({@link Table}). A listing's columns are fixed ({@code list_users},
 * {@code list_permissions}), or chosen by arguments ({@link WithColumns}). One instance per run.
 */
abstract class Listing extends CtlCommand {
    /** rabbitmqctl's columns when none are asked for. */
    abstract List<String> defaults();

    /** The informational line, as rabbitmqctl's. */
    abstract String banner();

    /** The rows, fetched from the HTTP API, each with (at least) the columns shown under their rabbitmqctl names. */
    abstract List<Map<String, Object>> rows(ApiClient api);

    /** The columns to show. */
    List<String> shown() {
        return defaults();
    }

    /** False for the few listings rabbitmqctl prints without a header line unless asked. */
    boolean headersByDefault() {
        return true;
    }

    @Override
    public Integer call() {
        List<String> shown = shown();
        List<Map<String, Object>> rows = rows(ctl.api());
        ctl.info(banner());
        Table.print(ctl, shown, rows, headersByDefault());
        return ExitCodes.OK;
    }

    /** The API's objects, each copied with rabbitmqctl's names for its fields added by {@code columns}. */
    static List<Map<String, Object>> renamed(List<Map<String, Object>> items,
            BiConsumer<Map<String, Object>, Map<String, Object>> columns) {
        List<Map<String, Object>> rows = new ArrayList<>(items.size());
        for (Map<String, Object> item : items) {
            Map<String, Object> row = new LinkedHashMap<>(item);
            columns.accept(item, row);
            rows.add(row);
        }
        return rows;
    }

    /** {@code item.object.field}, or null. */
    static Object nested(Map<String, Object> item, String object, String field) {
        return item.get(object) instanceof Map<?, ?> inner ? inner.get(field) : null;
    }

    /**
     * A listing whose columns are its arguments ({@code list_queues name messages consumers}), rabbitmqctl's
     * defaults when none are given; an unknown column is a usage error listing the supported ones.
     */
    abstract static class WithColumns extends Listing {
        @Parameters(paramLabel = "column", arity = "0..*", description = "the columns to show")
        List<String> columns = new ArrayList<>();

        /** Every column this listing has. */
        abstract List<String> supported();

        @Override
        List<String> shown() {
            List<String> shown = columns.isEmpty() ? defaults() : split(columns);
            List<String> unknown = shown.stream().filter(c -> !supported().contains(c)).toList();
            if (!unknown.isEmpty()) {
                throw new CtlException(ExitCodes.USAGE, "Info key(s) " + String.join(",", unknown)
                    + " are not supported. Supported keys: " + String.join(", ", supported()));
            }
            return shown;
        }

        /** As rabbitmqctl's info keys: an argument may hold several, separated by commas; each once. */
        private static List<String> split(List<String> arguments) {
            return arguments.stream().flatMap(a -> java.util.Arrays.stream(a.split(",")))
                .map(String::trim).filter(c -> !c.isEmpty()).distinct().toList();
        }
    }
}
