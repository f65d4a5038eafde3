/**
 * The broker as data structures and rules, independent of sockets: virtual hosts, exchanges, the binding
 * table, queues, consumers and their credit, the protocol-neutral message container. Depends on the codec
 * only. Its contents arrive with the server and routing issues; see docs/architecture.md.
 */
package io.skiffmq.core;
