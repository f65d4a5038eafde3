package io.skiffmq.server;

import java.util.Arrays;
import org.apache.qpid.proton.amqp.Binary;
import org.apache.qpid.proton.amqp.messaging.Data;
import org.apache.qpid.proton.amqp.messaging.Properties;
import org.apache.qpid.proton.message.Message;

/** Encoded test messages. */
final class Messages {
    private Messages() {
    }

    static byte[] encode(Message message) {
        byte[] bytes = new byte[64 * 1024];
        return Arrays.copyOf(bytes, message.encode(bytes, 0, bytes.length));
    }

    /** A message whose body is {@code body}, with {@code to} set when not null. */
    static byte[] data(String body, String to) {
        Message message = Message.Factory.create();
        if (to != null) {
            Properties properties = new Properties();
            properties.setTo(to);
            message.setProperties(properties);
        }
        message.setBody(new Data(new Binary(body.getBytes())));
        return encode(message);
    }

    static Message decode(byte[] bytes) {
        Message message = Message.Factory.create();
        message.decode(bytes, 0, bytes.length);
        return message;
    }

    static String body(byte[] bytes) {
        Binary binary = ((Data) decode(bytes).getBody()).getValue();
        return new String(binary.getArray(), binary.getArrayOffset(), binary.getLength());
    }
}
