package io.skiffmq.server.config;

/**
 * The setting {@code memory-high-watermark}: a fraction of the JVM's memory, the maximum heap plus the direct-memory
 * limit ({@code 0.4}, RabbitMQ's {@code vm_memory_high_watermark.relative} default), or a number of bytes
 * ({@code 512MB}, {@code vm_memory_high_watermark.absolute}). A plain number up to 1 is a fraction; one with a unit
 * ({@link ByteSize}) or a whole number above 1 is bytes. 0 blocks every publisher at once, as in RabbitMQ.
 *
 * @param fraction of the maximum heap plus the direct-memory limit, or -1 when {@code bytes} is set
 * @param bytes the limit itself, or -1 when {@code fraction} is set
 */
public record MemoryWatermark(double fraction, long bytes) {
    public static final MemoryWatermark DEFAULT = new MemoryWatermark(0.4, -1);

    public MemoryWatermark {
        if ((fraction < 0) == (bytes < 0) || fraction > 1) {
            throw new IllegalArgumentException("memory-high-watermark is a fraction in [0, 1] or a number of bytes");
        }
    }

    static MemoryWatermark parse(String value) {
        String text = value.trim();
        if (ByteSize.hasUnit(text)) {
            return new MemoryWatermark(-1, ByteSize.parse("memory-high-watermark", text));
        }
        double number;
        try {
            number = Double.parseDouble(text);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("memory-high-watermark must be a fraction of the heap (0.4) or bytes "
                + "(512MB), got " + value);
        }
        if (number >= 0 && number <= 1) {
            return new MemoryWatermark(number, -1);
        }
        if (number > 1 && text.chars().allMatch(Character::isDigit)) {
            return new MemoryWatermark(-1, Long.parseLong(text));
        }
        throw new IllegalArgumentException("memory-high-watermark must be a fraction in [0, 1] or a whole number of "
            + "bytes, got " + value);
    }

    /** The limit in bytes for a JVM that may use {@code memory} bytes (heap and direct). */
    public long limit(long memory) {
        return fraction >= 0 ? (long) (fraction * memory) : bytes;
    }

    @Override
    public String toString() {
        return fraction >= 0 ? Double.toString(fraction) : bytes + " bytes";
    }
}
