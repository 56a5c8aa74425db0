// Licensed to the Apache Software Foundation (ASF) under one
// or more contributor license agreements.  See the NOTICE file
// distributed with this work for additional information
// regarding copyright ownership.  The ASF licenses this file
// to you under the Apache License, Version 2.0 (the
// "License"); you may not use this file except in compliance
// with the License.  You may obtain a copy of the License at
//
//   http://www.apache.org/licenses/LICENSE-2.0
//
// Unless required by applicable law or agreed to in writing,
// software distributed under the License is distributed on an
// "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY
// KIND, either express or implied.  See the License for the
// specific language governing permissions and limitations
// under the License.

package utils

import (
	"fmt"
	"os"
	"reflect"
)

func MakeHTTPPath(apiVersion string, componentPath string) string {
	return fmt.Sprintf("/admin/%s%s", apiVersion, componentPath)
}

func IsNilFixed(i interface{}) bool {
	if i == nil {
		return true
	}
	switch reflect.TypeOf(i).Kind() {
	case reflect.Ptr, reflect.Map, reflect.Array, reflect.Chan, reflect.Slice:
		return reflect.ValueOf(i).IsNil()
	}
	return false
}

func GetConfigPath() string {
	// pulsar client config dir path, for example: PULSAR_CLIENT_CONF_PATH: /home/pulsar
	// configuration file path is: /home/pulsar/.config/pulsar
	if envConf, ok := os.LookupEnv("PULSAR_CLIENT_CONF_PATH"); ok {
		return envConf
	}
	return HomeDir()
}
