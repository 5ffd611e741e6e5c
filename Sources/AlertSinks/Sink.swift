import AlertCore
