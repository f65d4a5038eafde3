package io.skiffmq.server.config;

import java.math.BigDecimal;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A number of bytes as settings write it, with RabbitMQ's units: {@code kB}, {@code MB}, {@code GB}, {@code TB}
 * are powers of 1000 ({@code disk_free_limit = 50MB} is 50,000,000 bytes); {@code k}/{@code KiB}, {@code M}/
 * {@code MiB}, {@code G}/{@code GiB}, {@code T}/{@code TiB} powers of 1024; none (or {@code B}) bytes. A fraction
 * is allowed before a unit ({@code 1.5GB}).
 */
final class ByteSize {
    private static final Pattern FORMAT = Pattern.compile("(\\d+(?:\\.\\d+)?)\\s*([A-Za-z]*)");
    private static final Map<String, Long> UNITS = Map.ofEntries(
        Map.entry("", 1L), Map.entry("b", 1L),
        Map.entry("kb", 1000L), Map.entry("mb", 1000_000L), Map.entry("gb", 1000_000_000L),
        Map.entry("tb", 1000_000_000_000L),
        Map.entry("k", 1L << 10), Map.entry("ki", 1L << 10), Map.entry("kib", 1L << 10),
        Map.entry("m", 1L << 20), Map.entry("mi", 1L << 20), Map.entry("mib", 1L << 20),
        Map.entry("g", 1L << 30), Map.entry("gi", 1L << 30), Map.entry("gib", 1L << 30),
        Map.entry("t", 1L << 40), Map.entry("ti", 1L << 40), Map.entry("tib", 1L << 40));

    private ByteSize() {
    }

    /** True when {@code value} names a unit (it is a byte count, not a bare number). */
    static boolean hasUnit(String value) {
        Matcher m = FORMAT.matcher(value.trim());
        return m.matches() && !m.group(2).isEmpty();
    }

    /** @throws IllegalArgumentException for anything but a non-negative number and a known unit */
    static long parse(String name, String value) {
        Matcher m = FORMAT.matcher(value.trim());
        Long unit = m.matches() ? UNITS.get(m.group(2).toLowerCase(Locale.ROOT)) : null;
        if (unit == null) {
            throw new IllegalArgumentException(name + " must be bytes, optionally with a unit (50MB, 1GiB), got "
                + value);
        }
        try {
            return new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(unit)).longValueExact();
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException(name + " must be a whole number of bytes below 2^63, got " + value);
        }
    }
}
