package session

import (
	"strings"
	"sync"
)

// Tag returns a hash tag that puts a key in the slot of instance id's hash: a key
// holding it with no '{' before it (such as "orders:"+s.Tag(id)+":count") is in that
// slot on Redis Cluster, so a save's script may write it (see SaveEffects). It is
// "{<id>}" for a prefix without braces and an id without '}'. A prefix holding a hash
// tag ("{flowteam}:") gives its own, since it decides the slot of every key; for an id
// starting with '}', or a prefix whose first '{' is followed by '}', Redis hashes the
// key whole, and Tag is a tag of that slot. The id is not checked (see ValidateID).
func (s *RedisStore) Tag(id string) string {
	key := s.key(id)
	if t, ok := hashTag(key); ok {
		return "{" + t + "}"
	}
	return "{" + slotTag(crc16(key)%clusterSlots) + "}"
}

// clusterSlots is the number of slots of a Redis Cluster.
const clusterSlots = 16384

// hashTag returns what Redis Cluster hashes of key when the key holds a hash tag: the
// text between the first '{' and the first '}' after it, when that is not empty.
func hashTag(key string) (string, bool) {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			return key[i+1 : i+1+j], true
		}
	}
	return "", false
}

// slotTag returns a string of digits and lower-case letters in slot: a tag with no
// brace in it, for a key whose slot is that of a whole key.
func slotTag(slot uint16) string { return slotTags()[slot] }

// slotTags holds the first of the shortest such strings for each slot (up to four
// characters: three leave 85 slots without one), made once, when first needed.
var slotTags = sync.OnceValue(func() *[clusterSlots]string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	var tags [clusterSlots]string
	left := clusterSlots
	for n, count := 1, len(digits); left > 0; n, count = n+1, count*len(digits) {
		b := make([]byte, n)
		for i := 0; i < count && left > 0; i++ {
			for k, x := 0, i; k < n; k, x = k+1, x/len(digits) {
				b[k] = digits[x%len(digits)]
			}
			if slot := crc16(string(b)) % clusterSlots; tags[slot] == "" {
				tags[slot] = string(b)
				left--
			}
		}
	}
	return &tags
})

// crc16 is the CRC16 (XMODEM) of s, whose value modulo clusterSlots is the slot
// of a key Redis Cluster hashes whole.
func crc16(s string) uint16 {
	var crc uint16
	for i := range len(s) {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
