/**
 * Durability on Chronicle Queue: the message journal (record header followed by the message's original AMQP
 * bytes), queue indexes, stream logs, definitions, recovery and space reclamation. Depends on the codec only.
 * Its contents arrive with the durability issue; see docs/architecture.md.
 */
package io.skiffmq.store;
