// Decodes serialized message ids with the Pulsar Java client's
// MessageId.fromByteArray. Usage (a single-file program; java compiles it in
// memory): java -cp '<pulsar>/lib/*' DecodeIDs.java BASE64_ID...
// Prints one JSON list: per id its ledger, entry, partition and batch index
// (-1 for a message that is not in a batch).
import java.util.Base64;

import org.apache.pulsar.client.api.MessageId;
import org.apache.pulsar.client.api.MessageIdAdv;

public class DecodeIDs {
    public static void main(String[] args) throws Exception {
        StringBuilder out = new StringBuilder("[");
        for (int i = 0; i < args.length; i++) {
            MessageIdAdv id = (MessageIdAdv) MessageId.fromByteArray(Base64.getDecoder().decode(args[i]));
            if (i > 0) {
                out.append(',');
            }
            out.append(String.format("{\"ledger\":%d,\"entry\":%d,\"partition\":%d,\"batch_index\":%d}",
                    id.getLedgerId(), id.getEntryId(), id.getPartitionIndex(), id.getBatchIndex()));
        }
        System.out.println(out.append(']'));
    }
}
