// A producer written with the Pulsar Java client's JSONSchema (Jackson), for
// registry_pulsar_test.go. Run as a single-file program with the client jars
// of the Pulsar distribution on the class path:
//
//   java -cp 'PULSAR_HOME/lib/*' JSONBytes.java SERVICE_URL TOPIC
//
// It sends JSONSchema.of(Blob) records with byte[] fields (required and
// absent, in a list, a map, a nested record and a list of records), bytes
// that are not UTF-8 among them, then prints one JSON line of what it sent,
// each byte array in base64.
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.pulsar.client.api.Producer;
import org.apache.pulsar.client.api.PulsarClient;
import org.apache.pulsar.client.impl.schema.JSONSchema;

public class JSONBytes {
    public static class Part {
        public byte[] data;
        public String label;
    }

    public static class Blob {
        public long id;
        public byte[] blob;
        public byte[] maybe;
        public List<byte[]> chunks;
        public Map<String, byte[]> attrs;
        public Part part;
        public List<Part> parts;
    }

    static String b64(byte[] b) {
        return b == null ? "null" : "\"" + Base64.getEncoder().encodeToString(b) + "\"";
    }

    public static void main(String[] args) throws Exception {
        PulsarClient client = PulsarClient.builder().serviceUrl(args[0]).build();
        Producer<Blob> p = client.newProducer(JSONSchema.of(Blob.class)).topic(args[1]).create();
        List<String> rows = new ArrayList<>();
        byte[][] blobs = {{(byte) 0xff, 0, (byte) 0xc3, 'a', '"'}, {}};
        for (int i = 0; i < blobs.length; i++) {
            Blob o = new Blob();
            o.id = i + 1;
            o.blob = blobs[i];
            o.maybe = i == 0 ? null : new byte[] {(byte) 0x80};
            o.chunks = List.of(new byte[] {'a'}, new byte[] {(byte) 0xfe, (byte) 0xff});
            o.attrs = new LinkedHashMap<>();
            o.attrs.put("k", new byte[] {(byte) 0xe9});
            if (i == 0) {
                o.part = new Part();
                o.part.data = new byte[] {0x7f, (byte) 0x9f};
                o.part.label = "x";
            }
            Part p0 = new Part();
            p0.data = "p0".getBytes();
            o.parts = List.of(p0, new Part());
            p.send(o);
            rows.add(String.format("{\"id\":%d,\"blob\":%s,\"maybe\":%s,\"chunks\":[%s,%s],\"attrs\":{\"k\":%s},\"part\":%s,\"parts\":[%s,null]}",
                    o.id, b64(o.blob), b64(o.maybe), b64(o.chunks.get(0)), b64(o.chunks.get(1)), b64(o.attrs.get("k")),
                    o.part == null ? "null" : b64(o.part.data), b64(p0.data)));
        }
        p.close();
        client.close();
        System.out.println("[" + String.join(",", rows) + "]");
    }
}
