package flightwire

// PoisonReleased reports whether released ReceivedData buffers are
// overwritten in this build.
const PoisonReleased = poisonReleased
